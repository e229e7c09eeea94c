#!/usr/bin/env bash
# Writes the configuration files of one node of the local cluster (called by up.sh): its
# containerd, CNI network, kubelet and kube-proxy, under DIR ($ELO_CLUSTER_DIR for the first node,
# its own directory for each further node).
# usage: configs.sh DIR NODE_NAME NODE_IP POD_CIDR [CGROUP_ROOT]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DIR=$1 NAME=$2 NODE_IP=$3 NODE_POD_CIDR=$4 CGROUP_ROOT=${5:-}
mkdir -p "$STATE/containerd/certs.d" "$DIR/containerd" "$DIR/cni/net.d" "$DIR/cni/ipam" "$DIR/kubelet/root" "$DIR/pod-logs"
# A node in a network namespace of its own keeps its pods' network namespaces under its state dir
# (in its own mount namespace), not in the host's /run/netns.
NETNS_UNDER_STATE=false
[ "$DIR" = "$STATE" ] || NETNS_UNDER_STATE=true

# containerd 2.x (config version 4): own socket, root and state; no host config imports; cgroupfs;
# restrict_oom_score_adj (this machine lacks CAP_SYS_RESOURCE, so runc cannot set a negative
# oom_score_adj); our pause image; our CNI dirs. NRI is off: it would create /var/run/nri.
# Every node's containerd listens on the standard socket path in its own mount namespace and reads
# registry hosts from one directory (make test-olm and the quick start spec write there).
cat > "$DIR/containerd/config.toml" <<TOML
version = 4
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
imports = []
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.erofs", "io.containerd.differ.v1.erofs",
  "io.containerd.mount-handler.v1.erofs", "io.containerd.nri.v1.nri"]
[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = "$CONTAINERD_SOCK"
  [plugins.'io.containerd.server.v1.ttrpc']
    address = "$DIR/containerd/containerd.sock.ttrpc"
  [plugins.'io.containerd.server.v1.debug']
    address = ""
  [plugins.'io.containerd.internal.v1.opt']
    path = "$DIR/containerd/opt"
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
    netns_mounts_under_state_dir = $NETNS_UNDER_STATE
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          SystemdCgroup = false
          Root = "$DIR/containerd/runc"
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["/usr/lib/cni"]
      conf_dir = "$DIR/cni/net.d"
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = "127.0.0.1"
    stream_server_port = "0"
TOML

# CNI: one bridge per node (in the node's network namespace), host-local addresses from the node's
# pod CIDR; nothing is masqueraded (no traffic leaves the machine; the host routes between nodes).
cat > "$DIR/cni/net.d/10-elo-local.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "elo-local",
  "plugins": [{
    "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {"type": "host-local", "dataDir": "$DIR/cni/ipam",
             "ranges": [[{"subnet": "$NODE_POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
JSON

# kubelet: cgroupfs on a cgroup v1 host (failCgroupV1: false), no swap check, short crash-loop
# back-off so repeated restarts stay fast, eviction thresholds low enough for a shared disk. Every
# kubelet listens on the same ports, each in its node's network namespace; each further node's
# kubelet has a cgroupRoot of its own (up.sh creates it), so no two kubelets share kubepods.
cat > "$DIR/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 30248
tlsCertFile: $PKI/kubelet-$NAME.crt
tlsPrivateKeyFile: $PKI/kubelet-$NAME.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
${CGROUP_ROOT:+cgroupRoot: /$CGROUP_ROOT}
failCgroupV1: false
failSwapOn: false
podLogsDir: $DIR/pod-logs
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

# kube-proxy: iptables mode (in the node's network namespace); it sets no conntrack sysctls and
# no route_localnet.
cat > "$DIR/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $PKI/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $CLUSTER_CIDR
hostnameOverride: $NAME
healthzBindAddress: 127.0.0.1:30256
metricsBindAddress: 127.0.0.1:30249
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
YAML
