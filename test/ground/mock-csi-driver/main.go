// Command mock-csi-driver serves Kubernetes' own mock CSI driver
// (k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock, the driver that
// Kubernetes' storage e2e tests run) on a Unix socket, so that the attacher's
// end-to-end tests talk to a real, independently written CSI implementation.
//
// The upstream package has no main of its own; this file is the smallest one
// that serves it. The hostpath driver is the usual choice for this role, but
// its module is not served by the Go module proxy this project builds from.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

// registrar answers the kubelet's plugin watcher on the registration socket,
// as node-driver-registrar does for a real driver's node plugin: the kubelet
// asks who we are, then calls NodeGetInfo on the CSI endpoint and writes the
// driver and its node ID into the Node's CSINode.
type registrar struct {
	registration.UnimplementedRegistrationServer
	driverName string
	endpoint   string
}

func (r registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{Type: registration.CSIPlugin, Name: r.driverName, Endpoint: r.endpoint, SupportedVersions: []string{"1.0.0"}}, nil
}

func (r registrar) NotifyRegistrationStatus(_ context.Context, status *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	log.Printf("kubelet registration of %q: registered=%v error=%q", r.driverName, status.PluginRegistered, status.Error)
	return &registration.RegistrationStatusResponse{}, nil
}

// listen opens a Unix socket at path, removing a stale one from a crashed
// run first (Listen would fail with EADDRINUSE).
func listen(path string) net.Listener {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		log.Fatalf("removing stale socket %s: %v", path, err)
	}
	listener, err := net.Listen("unix", path)
	if err != nil {
		log.Fatalf("listening on %s: %v", path, err)
	}
	return listener
}

func main() {
	endpoint := flag.String("endpoint", "", "path of the Unix socket to serve on")
	driverName := flag.String("name", "mock.csi.test", "driver name; the mock driver also uses it as its only node ID")
	disableAttach := flag.Bool("disable-attach", false, "report no PUBLISH_UNPUBLISH_VOLUME capability")
	registrationPath := flag.String("kubelet-registration-path", "", "also serve the kubelet's plugin registration API on this socket (in its plugins_registry directory)")
	flag.Parse()
	if *endpoint == "" {
		log.Fatal("--endpoint is required")
	}
	listener := listen(*endpoint)

	driver := service.New(service.Config{DriverName: *driverName, DisableAttach: *disableAttach})
	server := grpc.NewServer()
	csi.RegisterIdentityServer(server, driver)
	csi.RegisterControllerServer(server, driver)
	csi.RegisterNodeServer(server, driver)

	var registrationServer *grpc.Server
	if *registrationPath != "" {
		registrationServer = grpc.NewServer()
		registration.RegisterRegistrationServer(registrationServer, registrar{driverName: *driverName, endpoint: *endpoint})
		registrationListener := listen(*registrationPath)
		go func() {
			if err := registrationServer.Serve(registrationListener); err != nil {
				log.Fatalf("serving registration: %v", err)
			}
		}()
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		// The registration socket goes first: the kubelet then deregisters the driver.
		if registrationServer != nil {
			registrationServer.Stop()
		}
		server.Stop()
	}()

	log.Printf("serving mock CSI driver %q on %s", *driverName, *endpoint)
	if err := server.Serve(listener); err != nil {
		log.Fatalf("serving: %v", err)
	}
}
