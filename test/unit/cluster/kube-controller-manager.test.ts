import { describe, expect, it } from "bun:test";
import { kubeControllerManagerArgs } from "../../../test/cluster/kube-controller-manager";

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
