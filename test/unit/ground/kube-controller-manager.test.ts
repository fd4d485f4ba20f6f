import { describe, expect, it } from "bun:test";
import { controllersSynced, kubeControllerManagerArgs } from "../../ground/kube-controller-manager";

describe("the test ground's kube-controller-manager", () => {
  it("runs only the attach/detach and PV binder controllers, alone, with the kubeconfig's credentials and no listener", () => {
    expect(kubeControllerManagerArgs({ binary: "/bin/kcm", kubeconfig: "/g/kubeconfig", logDir: "/g/logs" })).toEqual([
      "--kubeconfig=/g/kubeconfig",
      "--controllers=persistentvolume-attach-detach-controller,persistentvolume-binder-controller",
      "--use-service-account-credentials=false",
      "--leader-elect=false",
      "--secure-port=0",
      "--profiling=false",
      "--kube-api-qps=20",
      "--kube-api-burst=30",
      "-v=2",
    ]);
  });

  it("takes the client limits it is given instead of upstream's 20/30", () => {
    const args = kubeControllerManagerArgs({ binary: "/bin/kcm", kubeconfig: "/k", logDir: "/l", kubeApiQps: 1000, kubeApiBurst: 2000 });
    expect(args.filter((arg) => arg.startsWith("--kube-api-"))).toEqual(["--kube-api-qps=1000", "--kube-api-burst=2000"]);
  });
});

describe("kube-controller-manager readiness", () => {
  it("counts one synced line per controller, as v1.36 logs them without a controller name", () => {
    const log = [
      'I1123 17:23:25.564224    4631 attach_detach_controller.go:334] "Starting attach detach controller"',
      'I1123 17:23:25.564232    4631 shared_informer.go:402] "Waiting for caches to sync"',
      'I1123 17:23:25.564598    4631 shared_informer.go:402] "Waiting for caches to sync"',
      'I1123 17:23:25.666208    4631 shared_informer.go:409] "Caches are synced"',
      'I1123 17:23:25.666254    4631 pv_controller_base.go:174] "Controller initialized"',
      'I1123 17:23:25.666406    4631 shared_informer.go:409] "Caches are synced"',
    ];
    expect([controllersSynced(log.slice(0, 3).join("\n")), controllersSynced(log.slice(0, 5).join("\n")), controllersSynced(log.join("\n"))]).toEqual([0, 1, 2]);
  });
});
