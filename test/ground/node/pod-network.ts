/**
 * The node's pod network: Debian's CNI `bridge` and `host-local` plugins
 * give each pod an address on a bridge of this host, which makes the node
 * Ready and lets the kubelet probe pods. There is no kube-proxy, so the one
 * Service pods need, `kubernetes` (the API server, whose ClusterIP the
 * kubelet puts in every container's KUBERNETES_SERVICE_HOST), is routed by
 * one DNAT rule of our own to kube-apiserver on loopback, which the kernel
 * allows for traffic from the bridge only with `route_localnet`. Nothing
 * listens beyond loopback and the bridge.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./host-commands";

/** The bridge and its subnet; host-local hands out its addresses. */
export const podBridge = "ground0";
export const podSubnet = "10.211.0.0/24";

const routeLocalnet = "/proc/sys/net/ipv4/conf/all/route_localnet";

/** cniConfList is the network configuration containerd's CRI plugin reads. */
export function cniConfList(leasesDir: string): string {
  return JSON.stringify({
    cniVersion: "0.4.0",
    name: "node-ground",
    plugins: [
      {
        type: "bridge",
        bridge: podBridge,
        isGateway: true,
        // Pods talk to this host only: no masquerading rules for the outside.
        ipMasq: false,
        hairpinMode: true,
        ipam: { type: "host-local", ranges: [[{ subnet: podSubnet }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: leasesDir },
      },
    ],
  });
}

/** writeCniConfig writes the configuration into `dir`/net.d and returns that directory. */
export function writeCniConfig(dir: string): string {
  const confDir = join(dir, "net.d");
  mkdirSync(confDir, { recursive: true });
  writeFileSync(join(confDir, "10-node-ground.conflist"), cniConfList(join(dir, "leases")));
  return confDir;
}

/** The DNAT rule's arguments, the same for adding and deleting it. */
function serviceRule(serviceIp: string, apiserverPort: number): string[] {
  return ["PREROUTING", "-s", podSubnet, "-d", `${serviceIp}/32`, "-p", "tcp", "--dport", "443", "-j", "DNAT", "--to-destination", `127.0.0.1:${apiserverPort}`];
}

/**
 * ApiServiceRoute is the `kubernetes` Service's path from pods to the API
 * server on loopback; remove() restores what it changed.
 */
export class ApiServiceRoute {
  private constructor(
    private readonly rule: string[],
    private readonly previousRouteLocalnet: string,
  ) {}

  static add(serviceIp: string, apiserverPort: number): ApiServiceRoute {
    const previous = readFileSync(routeLocalnet, "utf8").trim();
    writeFileSync(routeLocalnet, "1");
    const rule = serviceRule(serviceIp, apiserverPort);
    run(["iptables", "-t", "nat", "-I", ...rule]);
    return new ApiServiceRoute(rule, previous);
  }

  remove(): void {
    run(["iptables", "-t", "nat", "-D", ...this.rule], { allowFailure: true });
    writeFileSync(routeLocalnet, this.previousRouteLocalnet);
    // The bridge plugin creates the bridge and never deletes it.
    run(["ip", "link", "delete", podBridge], { allowFailure: true });
  }
}
