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

// Package v1 holds the Pod webhooks. The mutating one enrolls pods: it moves their native
// liveness probes into the probe-context annotation, so that the kubelet no longer kills on
// liveness and the operator's node daemon probes instead (Enforce mode), or copies them there,
// leaving the kubelet in charge (Shadow mode), records the mode in the pod's mode label, and
// signs what it wrote. The validating one keeps that annotation, the opt-in annotations and the
// enrolled and mode labels as they were admitted.
package v1

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/daemonnodes"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/core/v1/steering"
)

var podlog = logf.Log.WithName("pod-webhook")

// MutatePath is where the Pod mutating webhook is served.
const MutatePath = "/mutate--v1-pod"

// KeySource gives the probe-context signing key (a *signature.Store in the manager).
type KeySource interface {
	Current() (signature.KeyPair, bool)
}

// Options configure the Pod webhooks.
type Options struct {
	// OperatorNamespace is never enrolled nor checked, nor is kube-system.
	OperatorNamespace string
	// OperatorUsername is the manager's own identity: the only one allowed to change the
	// protected annotations and label of a pod after its creation.
	OperatorUsername string
	// Keys signs the probe contexts the mutating webhook admits.
	Keys KeySource
	// Clock is the API server's clock as the manager measures it (internal/manager/apiclock); the
	// local clock, always taken as measured, when nil.
	Clock APIServerClock
}

// APIServerClock is the API server's clock as the manager measures it. The admission signature's
// issue time is compared with the pod's creationTimestamp, which the API server stamps: it is
// issued on the API server's clock, never on the manager's.
type APIServerClock interface {
	Now() time.Time
	// Offset reports whether the API server's clock was measured recently.
	Offset() (time.Duration, bool)
	// Read converts the times other replicas wrote on the API server's clock
	// (status.recentEvictions) to this replica's.
	Read() apiclock.Reading
}

// localClock is the local clock, for a manager that runs beside its API server (tests).
type localClock struct{}

func (localClock) Now() time.Time                { return time.Now() }
func (localClock) Offset() (time.Duration, bool) { return 0, true }
func (localClock) Read() apiclock.Reading        { return apiclock.Reading{Now: time.Now(), Known: true} }

// SetupPodWebhookWithManager registers the Pod mutating webhook (enrollment, CREATE) and the
// validating one (immutability, UPDATE). Policies are read from the manager's cache.
func SetupPodWebhookWithManager(mgr ctrl.Manager, o Options) error {
	defaulter := admission.WithDefaulter(mgr.GetScheme(), &PodDefaulter{
		Policies: mgr.GetClient(), OperatorNamespace: o.OperatorNamespace, Keys: o.Keys, Clock: o.Clock,
	})
	mgr.GetWebhookServer().Register(MutatePath,
		(&admission.Webhook{Handler: withWarnings{defaulter}}).WithRecoverPanic(true))
	return ctrl.NewWebhookManagedBy(mgr, &corev1.Pod{}).
		WithValidator(&PodImmutability{OperatorNamespace: o.OperatorNamespace, OperatorUsername: o.OperatorUsername}).
		Complete()
}

// Ignore: when the manager is down, pods are created with their native probe (fail-open).
// IfNeeded: a container added by a later webhook gets its probe moved too.
// +kubebuilder:webhook:path=/mutate--v1-pod,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod-v1.kb.io,admissionReviewVersions=v1,timeoutSeconds=5,reinvocationPolicy=IfNeeded
// +kubebuilder:rbac:groups=policy.enhancedliveness.io,resources=enhancedlivenesspolicies,verbs=get;list;watch

// PodDefaulter enrolls pods on CREATE.
type PodDefaulter struct {
	// Policies reads EnhancedLivenessPolicies and the metadata of Nodes (the manager's cache).
	Policies client.Reader
	// OperatorNamespace is never enrolled, nor is kube-system.
	OperatorNamespace string
	Keys              KeySource
	// Clock issues admission signatures; localClock when nil.
	Clock APIServerClock
}

var podGK = schema.GroupKind{Kind: "Pod"}

// Default validates the opt-in annotations and enrolls the pod when it opted in, or is selected by
// a policy with enroll: true, in the mode its policies give it (admissionMode), recorded in its
// mode label; an enrolled pod's probe context is signed (its admission signature: namespace,
// name, time; the manager seals it to the pod's UID once the pod exists). Invalid probes deny the
// pod, with the apiserver's wording and the container's name. A pod that is not enrolled leaves
// without the enrolled and mode labels and the signature, whatever its creator wrote; no pod
// leaves with a seal its creator wrote.
func (d *PodDefaulter) Default(ctx context.Context, pod *corev1.Pod) error {
	ns := pod.Namespace
	if req, err := admission.RequestFromContext(ctx); err == nil && req.Namespace != "" {
		ns = req.Namespace
	}
	if ns == metav1.NamespaceSystem || ns == d.OperatorNamespace {
		return nil
	}
	if errs := probecontext.ValidateOptIn(pod.Annotations); len(errs) > 0 {
		return invalid(pod, wrap("", errs))
	}
	// Only the manager seals, once the pod exists (a seal copied from another pod would not
	// verify anyway: it names that pod's UID).
	delete(pod.Annotations, appsv1alpha1.AnnotationProbeContextSeal)
	enrolled := false
	defer func() {
		if !enrolled {
			delete(pod.Labels, appsv1alpha1.LabelEnrolled)
			delete(pod.Labels, appsv1alpha1.LabelMode)
			delete(pod.Annotations, appsv1alpha1.AnnotationProbeContextSignature)
		}
	}()
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		// The kubelet runs a static pod from its manifest, not from this mirror of it: removing
		// the probe here would not stop the kubelet's own kill, and a stop by the operator would
		// come on top of it.
		if d.wantsEnrollment(ctx, ns, pod) {
			warn(ctx, "not enrolled in enhanced liveness: a mirror pod (annotation "+corev1.MirrorPodAnnotationKey+
				") of a static pod, which the kubelet runs from its manifest; it keeps its native livenessProbes")
		}
		return nil
	}
	if !d.wantsEnrollment(ctx, ns, pod) {
		return nil
	}
	if why := d.unserved(ctx, pod); why != "" {
		// Without a daemon to probe it, a moved probe would leave the pod no liveness at all.
		warn(ctx, "not enrolled in enhanced liveness: no node daemon of the operator will probe the pod: "+why+
			"; every container keeps its native livenessProbe")
		return nil
	}
	key, clk, mode, ok := d.ready(ctx, ns, pod)
	if !ok {
		return nil
	}
	var (
		warnings []string
		err      error
	)
	enrolled, warnings, err = enroll(pod, mode)
	for _, w := range warnings {
		warn(ctx, w)
	}
	if err != nil || !enrolled {
		return err
	}
	ctxKey := probecontext.AnnotationKey(pod.Annotations)
	pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = signature.SignAdmission(key, signature.Admission{
		Namespace: ns, Name: pod.Name, GenerateName: pod.GenerateName,
		AnnotationKey: ctxKey, Value: pod.Annotations[ctxKey], Issued: clk.Now()})
	d.steer(ctx, ns, pod, clk.Read())
	return nil
}

// ready returns what admitting an enrolled pod needs, or ok false, with an admission warning,
// when one of them is missing: the signing key, a measured API server clock, the pod's mode.
// Each fails open, as the webhook's failurePolicy does: the pod keeps its native probes.
func (d *PodDefaulter) ready(ctx context.Context, ns string, pod *corev1.Pod) (signature.KeyPair, APIServerClock, policyv1alpha1.PolicyMode, bool) {
	key, ok := d.Keys.Current()
	if !ok {
		// Fail open, like the webhook's failurePolicy: the pod keeps its native probes.
		warn(ctx, "not enrolled in enhanced liveness: the operator's probe-context signing key is not loaded yet; "+
			"the pod keeps its native livenessProbes")
		return key, nil, "", false
	}
	clk := d.Clock
	if clk == nil {
		clk = localClock{}
	}
	if _, measured := clk.Offset(); !measured {
		// Fail open, like the keys: a signature issued on a clock the manager cannot place against
		// the API server's might not verify, and the pod would be left with no liveness at all.
		warn(ctx, "not enrolled in enhanced liveness: the operator has not measured the API server's clock recently "+
			"(it cannot reach the API server); the pod keeps its native livenessProbes")
		return key, nil, "", false
	}
	mode, known := d.admissionMode(ctx, ns, pod)
	return key, clk, mode, known
}

// steer prefers, for a new pod of a controller, nodes other than those its controller's pods were
// evicted from because their restarts did not help there (status.recentEvictions of the policies
// that select it; the steering package). Preferred only, and never a reason to refuse the pod: a read
// error leaves it unsteered. The entries are written on the API server's clock (by whichever
// replica leads) and judged on this replica's, as at converts them.
func (d *PodDefaulter) steer(ctx context.Context, ns string, pod *corev1.Pod, at apiclock.Reading) {
	owner := metav1.GetControllerOf(pod)
	if owner == nil || pod.Spec.NodeName != "" {
		return
	}
	var policies policyv1alpha1.EnhancedLivenessPolicyList
	if err := d.Policies.List(ctx, &policies, client.InNamespace(ns)); err != nil {
		podlog.Error(err, "listing policies; the pod is not steered away from nodes its workload was evicted from", "namespace", ns)
		return
	}
	var entries []policyv1alpha1.RecentEviction
	for i := range policies.Items {
		p := &policies.Items[i]
		if ok, err := p.Selects(pod.Labels); err == nil && ok {
			entries = append(entries, at.LocalEvictions(podlog, p.Namespace+"/"+p.Name, p.Status.RecentEvictions)...)
		}
	}
	steering.Apply(pod, steering.AvoidedNodes(entries, owner.Kind, owner.Name, at.Now))
}

// admissionMode is the mode the pod is admitted in, and keeps for its life: Shadow when a policy
// of its namespace that selects it says Shadow (or DryRun, Shadow's deprecated name), else
// Enforce, which is also the default policy's mode. A pod several policies select is thus in
// Shadow when any of them says so, as it would be held when any of them held it. known is false,
// with an admission warning, when the policies cannot be read: the pod is then not enrolled.
func (d *PodDefaulter) admissionMode(ctx context.Context, ns string, pod *corev1.Pod) (mode policyv1alpha1.PolicyMode, known bool) {
	var policies policyv1alpha1.EnhancedLivenessPolicyList
	if err := d.Policies.List(ctx, &policies, client.InNamespace(ns)); err != nil {
		// Fail open: which of the kubelet and the operator is to restart the pod is not known.
		podlog.Error(err, "listing policies; the pod is not enrolled", "namespace", ns)
		warn(ctx, "not enrolled in enhanced liveness: the operator could not read the namespace's "+
			"EnhancedLivenessPolicies, which give the pod its mode; the pod keeps its native livenessProbes")
		return "", false
	}
	for i := range policies.Items {
		p := &policies.Items[i]
		if !p.Spec.Mode.IsShadow() {
			continue
		}
		// A selector that does not parse selects nothing, as in the decision.
		if ok, err := p.Selects(pod.Labels); err == nil && ok {
			return policyv1alpha1.ModeShadow, true
		}
	}
	return policyv1alpha1.ModeEnforce, true
}

// OptedIn reports whether the pod carries the opt-in annotation or OpenKruise's alias.
func OptedIn(pod *corev1.Pod) bool {
	return pod.Annotations[appsv1alpha1.AnnotationEnabled] == appsv1alpha1.TrueValue ||
		pod.Annotations[appsv1alpha1.AnnotationKruiseEnabled] == appsv1alpha1.TrueValue
}

// unserved says why no daemon will serve the pod, or "" when one may: its preset nodeName names a
// node whose labels the daemon DaemonSet does not select, or its required node selection excludes
// every node that DaemonSet selects (daemonnodes.Excluded). A node the cache does not hold (not
// created yet, or a read error) tells nothing: the pod is enrolled.
func (d *PodDefaulter) unserved(ctx context.Context, pod *corev1.Pod) string {
	if why := daemonnodes.Excluded(&pod.Spec); why != "" {
		return why
	}
	if pod.Spec.NodeName == "" {
		return ""
	}
	node := &metav1.PartialObjectMetadata{}
	node.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
	if err := d.Policies.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, node); err != nil {
		if !apierrors.IsNotFound(err) {
			podlog.Error(err, "reading the pod's node; the pod is enrolled", "node", pod.Spec.NodeName)
		}
		return ""
	}
	if daemonnodes.Runs(node.Labels) {
		return ""
	}
	return fmt.Sprintf("its nodeName %s is a node the operator's node daemon does not run on (its labels do not match %s)",
		pod.Spec.NodeName, daemonnodes.SelectorString())
}

func (d *PodDefaulter) wantsEnrollment(ctx context.Context, ns string, pod *corev1.Pod) bool {
	if OptedIn(pod) {
		return true
	}
	var policies policyv1alpha1.EnhancedLivenessPolicyList
	if err := d.Policies.List(ctx, &policies, client.InNamespace(ns)); err != nil {
		// Fail open, like the webhook's failurePolicy: the pod keeps its native probe.
		podlog.Error(err, "listing policies; pod not enrolled by policy", "namespace", ns)
		return false
	}
	for i := range policies.Items {
		p := &policies.Items[i]
		if !p.Spec.Enroll || p.DeletionTimestamp != nil {
			continue
		}
		if ok, err := p.Selects(pod.Labels); err == nil && ok {
			return true
		}
	}
	return false
}

// withWarnings returns the admission warnings the defaulter collected with its response
// (controller-runtime's Defaulter interface has no way to return them itself).
type withWarnings struct{ inner admission.Handler }

type warningsKey struct{}

type warningList struct {
	mu   sync.Mutex
	list []string
}

func (h withWarnings) Handle(ctx context.Context, req admission.Request) admission.Response {
	wl := &warningList{}
	resp := h.inner.Handle(context.WithValue(ctx, warningsKey{}, wl), req)
	wl.mu.Lock()
	defer wl.mu.Unlock()
	resp.Warnings = append(resp.Warnings, wl.list...)
	return resp
}

// warn adds an admission warning to the response of the request in ctx.
func warn(ctx context.Context, msg string) {
	if wl, ok := ctx.Value(warningsKey{}).(*warningList); ok {
		wl.mu.Lock()
		wl.list = append(wl.list, msg)
		wl.mu.Unlock()
	}
}
