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

// Package nodescope checks, on a real cluster of two nodes, that a node daemon's own credentials
// are held to its own node by the node-scope admission policy (and by RBAC), as a kubelet's are by
// the Node authorizer and NodeRestriction: the e2e and OLM suites share it.
package nodescope

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// PolicyName is the node-scope ValidatingAdmissionPolicy of the kustomize and OLM installs.
const PolicyName = "enhanced-liveness-operator-daemon-node-scope"

// container is the one container of the pods the checks make.
const container = "app"

// Writes is what the API server answered one node's credentials, by the write tried.
type Writes struct {
	// Node is the node whose credentials wrote; Other the node whose objects they wrote.
	Node, Other string
	// Own: writes to Node's own objects, which must be admitted.
	Own map[string]error
	// Denied: writes to Other's objects that the credentials' RBAC allows, which an admission
	// check must deny (the node-scope policy for a daemon, NodeRestriction for a kubelet).
	Denied map[string]error
	// NotGranted: writes to Other's objects that RBAC does not grant at all.
	NotGranted map[string]error
}

// Setup is what the checks write to: a namespace with a running pod on each of the two nodes, and
// a ContainerRecreateRequest for the pod on Other (its daemon executes it: a restart of a
// container that only this check uses).
type Setup struct {
	Node, Other      string
	OwnPod, OtherPod *corev1.Pod
	OtherCRR         *appsv1alpha1.ContainerRecreateRequest
	namespace        *corev1.Namespace
	c                client.Client
}

// NewSetup creates the Setup's objects with the cluster-admin client c; Cleanup removes them.
func NewSetup(ctx context.Context, c client.Client, node, other, image string) (*Setup, error) {
	if node == other || other == "" {
		return nil, fmt.Errorf("the node-scope checks need two nodes, got %q and %q", node, other)
	}
	s := &Setup{Node: node, Other: other, c: c,
		namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-scope-"}}}
	if err := c.Create(ctx, s.namespace); err != nil {
		return s, fmt.Errorf("creating a namespace: %w", err)
	}
	var err error
	if s.OwnPod, err = runningPod(ctx, c, s.namespace.Name, "on-own-node", node, image); err != nil {
		return s, err
	}
	if s.OtherPod, err = runningPod(ctx, c, s.namespace.Name, "on-other-node", other, image); err != nil {
		return s, err
	}
	s.OtherCRR = &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace.Name, Name: "on-other-node"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: s.OtherPod.Name,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: container}}}}
	if err := c.Create(ctx, s.OtherCRR); err != nil {
		return s, fmt.Errorf("creating a ContainerRecreateRequest for %s: %w", s.OtherPod.Name, err)
	}
	if s.OtherCRR.Labels[appsv1alpha1.LabelCRRNodeName] != other {
		return s, fmt.Errorf("the request for a pod on %s is labelled %v", other, s.OtherCRR.Labels)
	}
	return s, nil
}

// Cleanup deletes the Setup's namespace.
func (s *Setup) Cleanup() {
	if s != nil && s.namespace.Name != "" {
		_ = s.c.Delete(context.Background(), s.namespace)
	}
}

// runningPod creates a pod of image bound to node and waits until its container runs.
func runningPod(ctx context.Context, c client.Client, ns, name, node, image string) (*corev1.Pod, error) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: new(int64(2)),
			Containers: []corev1.Container{{Name: container, Image: image, ImagePullPolicy: corev1.PullNever}}}}
	var err error
	// The namespace's default ServiceAccount appears a moment after the namespace.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		if err = c.Create(ctx, pod); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating pod %s on %s: %w", name, node, err)
	}
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return nil, err
		}
		if len(pod.Status.ContainerStatuses) == 1 && pod.Status.ContainerStatuses[0].State.Running != nil {
			return pod, nil
		}
	}
	return nil, fmt.Errorf("pod %s/%s on %s not running after 90 s", ns, name, node)
}

// TryDaemonWrites writes, with a token of the daemon ServiceAccount bound to daemonPod (as the
// daemon's own token is), to its own node's NodePodProbeReport status, to both nodes'
// NodePodProbes (the manager's alone), and to the other node's NodePodProbeReport,
// ContainerRecreateRequest and Lease in every way the daemon could. c is a cluster-admin client, cfg its config (the API server's address and CA).
func (s *Setup) TryDaemonWrites(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, daemonPod *corev1.Pod,
	operatorNS string) (Writes, error) {
	w := Writes{Node: daemonPod.Spec.NodeName, Other: s.Other, Own: map[string]error{}, Denied: map[string]error{}, NotGranted: map[string]error{}}
	if w.Node != s.Node {
		return w, fmt.Errorf("daemon pod %s runs on %s, the setup is for %s", daemonPod.Name, w.Node, s.Node)
	}
	d, err := TokenClient(ctx, cs, cfg, s.c, daemonPod)
	if err != nil {
		return w, err
	}
	status := client.RawPatch(types.MergePatchType, []byte(`{"status":{}}`))
	label := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"written-by":"another-node"}}}`))
	npp := func(n string) client.Object {
		return &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	report := func(n string) client.Object {
		return &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: n}}
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNS, Name: appsv1alpha1.DaemonLeasePrefix + s.Other}}

	w.Own["NodePodProbeReport "+s.Node+" status patch"] = d.Status().Patch(ctx, report(s.Node), status)
	// The manager alone writes NodePodProbes: RBAC grants the daemon no write to any, its own
	// node's included.
	for _, n := range []string{s.Node, s.Other} {
		w.NotGranted["NodePodProbe "+n+" status patch"] = d.Status().Patch(ctx, npp(n), status)
		w.NotGranted["NodePodProbe "+n+" patch"] = d.Patch(ctx, npp(n), label)
	}

	other := map[string]client.Object{"NodePodProbeReport " + s.Other: report(s.Other),
		"ContainerRecreateRequest " + s.OtherCRR.Name + " (on " + s.Other + ")": s.OtherCRR.DeepCopy()}
	for what, o := range other {
		w.Denied[what+" status patch"] = d.Status().Patch(ctx, o.DeepCopyObject().(client.Object), status)
		w.Denied[what+" status update"] = s.updateAs(ctx, o.DeepCopyObject().(client.Object), func(o client.Object) error {
			return d.Status().Update(ctx, o)
		})
		w.NotGranted[what+" patch"] = d.Patch(ctx, o.DeepCopyObject().(client.Object), label)
		w.NotGranted[what+" delete"] = d.Delete(ctx, o.DeepCopyObject().(client.Object))
	}
	w.Denied["Lease "+lease.Name+" update"] = s.updateAs(ctx, lease, func(o client.Object) error { return d.Update(ctx, o) })
	w.NotGranted["ContainerRecreateRequest create (for a pod on "+s.Other+")"] = d.Create(ctx, &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.namespace.Name, Name: "by-another-node"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: s.OtherPod.Name,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: container}}}})
	return w, nil
}

// TryKubeletWrites writes, with the kubelet credentials of the setup's node (kubeletCfg), its own
// Node's and pod's status, and the other node's Node and pod status: what the Node authorizer and
// NodeRestriction allow a kubelet, next to what the node-scope policy allows a daemon.
func (s *Setup) TryKubeletWrites(ctx context.Context, kubeletCfg *rest.Config) (Writes, error) {
	w := Writes{Node: s.Node, Other: s.Other, Own: map[string]error{}, Denied: map[string]error{}, NotGranted: map[string]error{}}
	k, err := client.New(kubeletCfg, client.Options{Scheme: s.c.Scheme(), Mapper: s.c.RESTMapper()})
	if err != nil {
		return w, err
	}
	status := client.RawPatch(types.MergePatchType, []byte(`{"status":{}}`))
	node := func(n string) client.Object { return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}} }
	w.Own["Node "+s.Node+" status patch"] = k.Status().Patch(ctx, node(s.Node), status)
	w.Own["Pod "+s.OwnPod.Name+" (on "+s.Node+") status patch"] = k.Status().Patch(ctx, s.OwnPod.DeepCopy(), status)
	w.Denied["Node "+s.Other+" status patch"] = k.Status().Patch(ctx, node(s.Other), status)
	w.Denied["Node "+s.Other+" status update"] = s.updateAs(ctx, node(s.Other), func(o client.Object) error { return k.Status().Update(ctx, o) })
	w.Denied["Pod "+s.OtherPod.Name+" (on "+s.Other+") status patch"] = k.Status().Patch(ctx, s.OtherPod.DeepCopy(), status)
	w.Denied["Pod "+s.OtherPod.Name+" (on "+s.Other+") status update"] = s.updateAs(ctx, s.OtherPod.DeepCopy(),
		func(o client.Object) error { return k.Status().Update(ctx, o) })
	return w, nil
}

// updateAs reads o with the admin client and writes it back with write, again on a conflict
// (its node's own writers change it meanwhile): the answer is about who writes, not when.
func (s *Setup) updateAs(ctx context.Context, o client.Object, write func(client.Object) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			return fmt.Errorf("reading %s as admin: %w", o.GetName(), err)
		}
		return write(o)
	})
}

// CheckDaemon returns nil when the daemon's token wrote its own node's objects, the node-scope
// admission policy refused every write RBAC allows it to the other node's, naming the daemon's
// node, and RBAC refused the others; else everything that went otherwise.
func (w Writes) CheckDaemon() error {
	return w.check(func(err error) string {
		switch {
		case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
			return "not refused as forbidden"
		case !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+PolicyName+"'"):
			return "not refused by " + PolicyName
		case !strings.Contains(err.Error(), "the node daemon of node "+w.Node+" may write only"):
			return "the refusal does not name the daemon's node " + w.Node
		}
		return ""
	})
}

// CheckKubelet returns nil when the kubelet's credentials wrote its own Node's and pod's status
// and NodeRestriction refused it the other node's; else everything that went otherwise.
func (w Writes) CheckKubelet() error {
	return w.check(func(err error) string {
		switch {
		case !apierrors.IsForbidden(err):
			return "not refused as forbidden"
		case !strings.Contains(err.Error(), `node "`+w.Node+`"`):
			return "the refusal does not name the kubelet's node " + w.Node
		}
		return ""
	})
}

func (w Writes) check(deniedWrongly func(error) string) error {
	var bad []string
	for _, what := range slices.Sorted(maps.Keys(w.Own)) {
		if err := w.Own[what]; err != nil {
			bad = append(bad, fmt.Sprintf("%s: refused to node %s's own credentials: %v", what, w.Node, err))
		}
	}
	for _, what := range slices.Sorted(maps.Keys(w.Denied)) {
		err := w.Denied[what]
		if err == nil {
			bad = append(bad, fmt.Sprintf("%s: admitted for node %s's credentials", what, w.Node))
		} else if why := deniedWrongly(err); why != "" {
			bad = append(bad, fmt.Sprintf("%s: %s: %v", what, why, err))
		}
	}
	for _, what := range slices.Sorted(maps.Keys(w.NotGranted)) {
		err := w.NotGranted[what]
		if err == nil {
			bad = append(bad, fmt.Sprintf("%s: admitted for node %s's credentials", what, w.Node))
		} else if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "cannot") {
			bad = append(bad, fmt.Sprintf("%s: not refused by RBAC: %v", what, err))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d writes went otherwise:\n  %s", len(bad), len(w.Own)+len(w.Denied)+len(w.NotGranted),
			strings.Join(bad, "\n  "))
	}
	return nil
}

// Summary lists every write and its answer, one a line (for a report).
func (w Writes) Summary() string {
	var b strings.Builder
	for _, group := range []struct {
		name string
		m    map[string]error
	}{{"own", w.Own}, {"denied", w.Denied}, {"not granted", w.NotGranted}} {
		for _, what := range slices.Sorted(maps.Keys(group.m)) {
			answer := "admitted"
			if err := group.m[what]; err != nil {
				answer = err.Error()
			}
			fmt.Fprintf(&b, "%s -> %s: %s\n", w.Node, what, answer)
		}
	}
	return b.String()
}

// TokenClient returns a client that authenticates with a token of pod's ServiceAccount bound to
// pod (what the kubelet mounts into it): the API server then knows the pod's node.
func TokenClient(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, like client.Client, pod *corev1.Pod) (client.Client, error) {
	tr, err := cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, pod.Spec.ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(600)),
			BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token of %s/%s bound to pod %s: %w", pod.Namespace, pod.Spec.ServiceAccountName, pod.Name, err)
	}
	anon := rest.AnonymousClientConfig(cfg)
	anon.BearerToken = tr.Status.Token
	anon.Timeout = 30 * time.Second
	return client.New(anon, client.Options{Scheme: like.Scheme(), Mapper: like.RESTMapper()})
}
