#!/usr/bin/env bash
# Writes the configuration files of the local cluster under $ELO_CLUSTER_DIR (called by up.sh).
# usage: configs.sh NODE_IP
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
NODE_IP=$1
mkdir -p "$STATE/containerd/certs.d" "$STATE/cni/net.d" "$STATE/cni/ipam" "$STATE/kubelet/root" "$STATE/pod-logs"

# containerd 2.x (config version 4): own socket, root and state; no host config imports; cgroupfs;
# restrict_oom_score_adj (this machine lacks CAP_SYS_RESOURCE, so runc cannot set a negative
# oom_score_adj); our pause image; our CNI dirs. NRI is off: it would create /var/run/nri.
cat > "$STATE/containerd/config.toml" <<TOML
version = 4
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
imports = []
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.erofs", "io.containerd.differ.v1.erofs",
  "io.containerd.mount-handler.v1.erofs", "io.containerd.nri.v1.nri"]
[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = "$CONTAINERD_SOCK"
  [plugins.'io.containerd.server.v1.ttrpc']
    address = "$STATE/containerd/containerd.sock.ttrpc"
  [plugins.'io.containerd.server.v1.debug']
    address = ""
  [plugins.'io.containerd.internal.v1.opt']
    path = "$STATE/containerd/opt"
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    # Registry hosts (hosts.toml) come only from the state dir, not from /etc: make test-olm
    # writes the CA of its test registry there.
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "$STATE/containerd/certs.d"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "localhost/pause:e2e"
  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    enable_selinux = false
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$STATE/containerd/runc"
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "$STATE/cni/net.d"
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
TOML

# CNI: one bridge, host-local addresses; nothing is masqueraded (no traffic leaves the machine).
cat > "$STATE/cni/net.d/10-elo-local.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "elo-local",
  "plugins": [{
    "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$STATE/cni/ipam",
             "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
JSON

# kubelet: cgroupfs on a cgroup v1 host (failCgroupV1: false), no swap check, short crash-loop
# back-off so repeated restarts stay fast, eviction thresholds low enough for a shared disk.
cat > "$STATE/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 30248
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: $STATE/pod-logs
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
crashLoopBackOff: {maxContainerRestartPeriod: 5s}
# EventedPLEG: the kubelet subscribes to containerd's container events and relists a pod as soon
# as one of its containers stops (the 1 s periodic relist stays). A container stopped through CRI
# (a ContainerRecreateRequest) is then restarted at once instead of at the next relist.
featureGates: {EventedPLEG: true}
YAML

# kube-proxy: iptables mode; it sets no conntrack sysctls and no route_localnet.
cat > "$STATE/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE_NAME
healthzBindAddress: 127.0.0.1:30256
metricsBindAddress: 127.0.0.1:30249
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
YAML
