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
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service"
)

func main() {
	endpoint := flag.String("endpoint", "", "path of the Unix socket to serve on")
	driverName := flag.String("name", "mock.csi.test", "driver name; the mock driver also uses it as its only node ID")
	disableAttach := flag.Bool("disable-attach", false, "report no PUBLISH_UNPUBLISH_VOLUME capability")
	flag.Parse()
	if *endpoint == "" {
		log.Fatal("--endpoint is required")
	}

	// A stale socket from a crashed run would make Listen fail with EADDRINUSE.
	if err := os.Remove(*endpoint); err != nil && !os.IsNotExist(err) {
		log.Fatalf("removing stale socket %s: %v", *endpoint, err)
	}
	listener, err := net.Listen("unix", *endpoint)
	if err != nil {
		log.Fatalf("listening on %s: %v", *endpoint, err)
	}

	driver := service.New(service.Config{DriverName: *driverName, DisableAttach: *disableAttach})
	server := grpc.NewServer()
	csi.RegisterIdentityServer(server, driver)
	csi.RegisterControllerServer(server, driver)
	csi.RegisterNodeServer(server, driver)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-stop
		server.Stop()
	}()

	log.Printf("serving mock CSI driver %q on %s", *driverName, *endpoint)
	if err := server.Serve(listener); err != nil {
		log.Fatalf("serving: %v", err)
	}
}
