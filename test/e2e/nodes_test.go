//go:build e2e

/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/test/project"
)

// The suite runs on the local cluster's real nodes (hack/local-cluster: two by default). Specs
// about one node pin their pods with app.node; the others read the node from the pod.

// realNodes are the names of the cluster's nodes that run a kubelet (the Ready ones), sorted: the
// first is the node in the host's namespaces ("node A"), the second the next ("node B").
func realNodes() []string {
	GinkgoHelper()
	var list corev1.NodeList
	Expect(k8s.List(context.Background(), &list)).To(Succeed())
	var out []string
	for _, n := range list.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				out = append(out, n.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// twoNodes returns node A and node B, and fails the spec when the cluster has fewer.
func twoNodes() (a, b string) {
	GinkgoHelper()
	nodes := realNodes()
	Expect(len(nodes)).To(BeNumerically(">=", 2), "this spec needs two real nodes (hack/local-cluster: ELO_NODES=2)")
	return nodes[0], nodes[1]
}

// nodeIP is the node's InternalIP (where its host-network daemon listens).
func nodeIP(node string) string {
	GinkgoHelper()
	n := &corev1.Node{}
	Expect(k8s.Get(context.Background(), client.ObjectKey{Name: node}, n)).To(Succeed())
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	Fail("node " + node + " has no InternalIP")
	return ""
}

// nodeContainerd is the socket of the node's containerd as this host reaches it, from
// E2E_NODE_CONTAINERD ("NAME=SOCKET ...", set by hack/local-cluster/e2e.sh).
func nodeContainerd(node string) string {
	GinkgoHelper()
	for kv := range strings.FieldsSeq(os.Getenv("E2E_NODE_CONTAINERD")) {
		if name, sock, ok := strings.Cut(kv, "="); ok && name == node {
			return sock
		}
	}
	Fail(fmt.Sprintf("no containerd socket for node %s in E2E_NODE_CONTAINERD=%q (run make test-e2e)", node,
		os.Getenv("E2E_NODE_CONTAINERD")))
	return ""
}

// nodeCtr runs ctr against the node's containerd (the suite runs on the machine of the nodes, as
// root).
func nodeCtr(node string, args ...string) (string, error) {
	base := []string{"--address", nodeContainerd(node), "-n", "k8s.io"}
	return project.Run(exec.Command("ctr", append(base, args...)...))
}

// kubeletConfig is the client configuration of the node's kubelet (its credentials), from the
// local cluster's PKI directory (E2E_CLUSTER_PKI).
func kubeletConfig(node string) *rest.Config {
	GinkgoHelper()
	dir := os.Getenv("E2E_CLUSTER_PKI")
	Expect(dir).NotTo(BeEmpty(), "E2E_CLUSTER_PKI: run make test-e2e")
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubelet-client-"+node+".kubeconfig"))
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

// daemonLease is the heartbeat Lease of the node's daemon.
func daemonLease(node string) (*coordinationv1.Lease, error) {
	l := &coordinationv1.Lease{}
	err := k8s.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: appsv1alpha1.DaemonLeasePrefix + node}, l)
	return l, err
}

// daemonLeaseFresh is a poll function: the node's daemon renewed its Lease within its duration.
func daemonLeaseFresh(node string) func() bool {
	return func() bool {
		l, err := daemonLease(node)
		if err != nil || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
			return false
		}
		return time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
	}
}

// everyDaemonLeaseFresh: the daemon of every real node renews its Lease.
func everyDaemonLeaseFresh() bool {
	nodes := realNodes()
	for _, n := range nodes {
		if !daemonLeaseFresh(n)() {
			return false
		}
	}
	return len(nodes) > 0
}

// daemonPodList lists the daemon pods (owned by a DaemonSet in the operator namespace).
func daemonPodList() []corev1.Pod {
	var pods corev1.PodList
	Expect(k8s.List(context.Background(), &pods, client.InNamespace(operatorNS))).To(Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		for _, o := range p.OwnerReferences {
			if o.Kind == "DaemonSet" {
				out = append(out, p)
			}
		}
	}
	return out
}

// daemonPodOn is the running daemon pod of the node.
func daemonPodOn(node string) corev1.Pod {
	GinkgoHelper()
	var found []corev1.Pod
	for _, p := range daemonPodList() {
		if p.Spec.NodeName == node && p.DeletionTimestamp == nil && isReady(p) {
			found = append(found, p)
		}
	}
	Expect(found).To(HaveLen(1), "one ready daemon pod on %s", node)
	return found[0]
}

// daemonRunning is a poll function: the node's daemon pod is ready.
func daemonRunning(node string) func() bool {
	return func() bool {
		for _, p := range daemonPodList() {
			if p.Spec.NodeName == node && p.DeletionTimestamp == nil && isReady(p) {
				return true
			}
		}
		return false
	}
}
