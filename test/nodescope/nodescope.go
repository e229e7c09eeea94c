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

// Package nodescope checks, on a real cluster, that a node daemon's own credentials are held to
// its own node by the node-scope admission policy: the e2e and OLM suites share it.
package nodescope

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// OtherNode is the Node object the node-scope checks create: no kubelet, and no
// kubernetes.io/os label, so the daemon DaemonSet (nodeSelector kubernetes.io/os=linux) does not
// schedule a pod to it.
const OtherNode = "e2e-other-node"

// DaemonWrites is what the API server answered the daemon's own ServiceAccount token.
type DaemonWrites struct {
	// Node is the daemon's node (its token is bound to the daemon pod there).
	Node string
	// OwnReport: a status patch of its node's NodePodProbeReport (must be admitted).
	OwnReport error
	// OwnNPP: a status patch of its node's NodePodProbe (must be refused by RBAC: the manager
	// alone writes NodePodProbes).
	OwnNPP error
	// OtherReport, OtherCRR: status patches of OtherNode's NodePodProbeReport and of a
	// ContainerRecreateRequest labelled with OtherNode (must be denied by the node-scope policy).
	OtherReport, OtherCRR error
}

// TryDaemonWrites creates a second Node object (OtherNode) with a NodePodProbe and its report, a pod bound to it
// and a ContainerRecreateRequest for that pod, then writes their status with a token of the
// daemon ServiceAccount bound to daemonPod, as the daemon's own token is. cleanup removes what it
// created. c is a cluster-admin client, cfg its config (for the API server's address and CA).
func TryDaemonWrites(ctx context.Context, c client.Client, cs kubernetes.Interface, cfg *rest.Config, daemonPod *corev1.Pod,
	image string) (w DaemonWrites, cleanup func(), err error) {
	var undo []client.Object
	cleanup = func() {
		for _, o := range slices.Backward(undo) {
			_ = c.Delete(context.Background(), o, client.GracePeriodSeconds(0))
		}
	}
	create := func(o client.Object) error {
		if err := c.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
		undo = append(undo, o)
		return nil
	}
	w.Node = daemonPod.Spec.NodeName
	if err := create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: OtherNode}}); err != nil {
		return w, cleanup, err
	}
	if err := create(&appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: OtherNode}}); err != nil {
		return w, cleanup, err
	}
	// The manager may have created the report already (it does with each NodePodProbe).
	report := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: OtherNode}}
	if err := create(report); err != nil && !apierrors.IsAlreadyExists(err) {
		return w, cleanup, err
	} else if err != nil {
		undo = append(undo, report)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "node-scope-"}}
	if err := create(ns); err != nil {
		return w, cleanup, err
	}
	const container = "app" // the pod's one container, which the request names
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "elsewhere"},
		Spec: corev1.PodSpec{NodeName: OtherNode, Containers: []corev1.Container{{Name: container, Image: image,
			ImagePullPolicy: corev1.PullNever}}}}
	// The namespace's default ServiceAccount appears a moment after the namespace.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		if err = create(pod); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return w, cleanup, err
	}
	// No kubelet runs there: report the container running, as one would, so a request can name it.
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, Image: image, ContainerID: "containerd://elsewhere-app", Ready: true, Started: new(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
	if err := c.Status().Update(ctx, pod); err != nil {
		return w, cleanup, fmt.Errorf("reporting the pod on %s running: %w", OtherNode, err)
	}
	crr := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "elsewhere"},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: pod.Name,
			Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: container}}}}
	if err := create(crr); err != nil {
		return w, cleanup, err
	}
	if crr.Labels[appsv1alpha1.LabelCRRNodeName] != OtherNode {
		return w, cleanup, fmt.Errorf("the request for a pod on %s is labelled %v", OtherNode, crr.Labels)
	}

	daemon, err := TokenClient(ctx, cs, cfg, c, daemonPod)
	if err != nil {
		return w, cleanup, err
	}
	status := client.RawPatch(types.MergePatchType, []byte(`{"status":{}}`))
	w.OwnReport = daemon.Status().Patch(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: w.Node}}, status)
	w.OwnNPP = daemon.Status().Patch(ctx, &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: w.Node}}, status)
	w.OtherReport = daemon.Status().Patch(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: OtherNode}}, status)
	w.OtherCRR = daemon.Status().Patch(ctx, crr.DeepCopy(), client.RawPatch(types.MergePatchType,
		[]byte(`{"status":{"message":"written by another node's daemon"}}`)))
	return w, cleanup, nil
}

// Check returns nil when the daemon's token wrote its own node's NodePodProbeReport status, RBAC
// refused it its own node's NodePodProbe status, and the node-scope admission policy refused it
// the other node's report and request; else what went otherwise.
func (w DaemonWrites) Check() error {
	if w.OwnReport != nil {
		return fmt.Errorf("the daemon's token was refused its own node's NodePodProbeReport status: %w", w.OwnReport)
	}
	switch {
	case w.OwnNPP == nil:
		return fmt.Errorf("the daemon of node %s wrote the status of its NodePodProbe", w.Node)
	case !apierrors.IsForbidden(w.OwnNPP) || strings.Contains(w.OwnNPP.Error(), "ValidatingAdmissionPolicy"):
		return fmt.Errorf("writing the status of its NodePodProbe: refused, but not by RBAC: %w", w.OwnNPP)
	}
	for what, err := range map[string]error{"NodePodProbeReport " + OtherNode: w.OtherReport,
		"a ContainerRecreateRequest of " + OtherNode: w.OtherCRR} {
		switch {
		case err == nil:
			return fmt.Errorf("the daemon of node %s wrote the status of %s", w.Node, what)
		case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err),
			!strings.Contains(err.Error(), "ValidatingAdmissionPolicy 'enhanced-liveness-operator-daemon-node-scope'"),
			!strings.Contains(err.Error(), "the node daemon of node "+w.Node):
			return fmt.Errorf("writing the status of %s: refused, but not by the node-scope policy: %w", what, err)
		}
	}
	if !strings.Contains(w.OtherReport.Error(), "may write only NodePodProbeReport "+w.Node+", not "+OtherNode) {
		return fmt.Errorf("unexpected refusal: %w", w.OtherReport)
	}
	return nil
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
