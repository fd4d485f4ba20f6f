// Command pause is the node ground's sandbox image (containerd's
// sandbox_image): it holds a pod's namespaces open and does nothing else
// until it is told to stop. There is no registry to pull
// registry.k8s.io/pause from, so the ground builds and packs this one.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
