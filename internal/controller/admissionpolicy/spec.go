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

// Package admissionpolicy keeps the operator's ValidatingAdmissionPolicies: the one that makes a
// pod's probe context, its signatures, its opt-in annotations and its enrolled and mode labels
// immutable after creation, in the apiserver itself (it holds while the manager, and so the
// fail-open pod webhook, is down), the one that keeps each node daemon to the objects of its own
// node, and the one that leaves RestartHolds to the manager. An OLM bundle cannot carry a
// ValidatingAdmissionPolicy, so the manager creates them and keeps them in shape, as it does the
// daemon DaemonSet: both install paths get the same.
package admissionpolicy

import (
	"maps"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// policyType and bindingType are the kinds of the objects the policies are made of.
var (
	policyType  = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"}
	bindingType = metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"}
)

const (
	// Name is the name of the policy and of its binding (cluster-scoped).
	Name = "enhanced-liveness-operator-pod-probe-immutable"

	// OwnerCRD owns the policy and the binding: cluster-scoped objects cannot be owned by the
	// namespaced manager Deployment, and this CRD is deleted by every uninstall (make undeploy,
	// operator-sdk cleanup), which lets the garbage collector remove them.
	OwnerCRD = "nodepodprobes.apps.enhancedliveness.io"
)

// managedLabels are those of the policy and the binding; the controller watches only objects that carry them.
var managedLabels = ssa.ManagedLabels()

// ManagedSelector selects the objects this package builds.
func ManagedSelector() labels.Selector { return labels.SelectorFromSet(managedLabels) }

// Config is what the policy depends on.
type Config struct {
	// OperatorUsername is the manager's own identity (learned with a SelfSubjectReview): the one
	// user allowed to change the protected keys. Empty exempts nobody.
	OperatorUsername string
	// DaemonUsername is the node daemon's ServiceAccount user
	// (system:serviceaccount:<operator namespace>:<daemon ServiceAccount>), which the node-scope
	// policy holds to its own node.
	DaemonUsername string
	// OwnerUID is the UID of OwnerCRD; empty leaves the objects without an owner.
	OwnerUID types.UID
}

// Build returns the policy and its binding. The policy matches updates of pods and of their
// status (the status subresource can change labels and annotations too) and the creation of
// pods/binding (a Binding's annotations and labels are merged into the pod), in every namespace,
// kube-system included: the webhook never enrolls pods there, so nobody may make one look enrolled.
func Build(c Config) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	forbidden := metav1.StatusReasonForbidden
	validations := make([]admissionregistrationv1.Validation, 0, len(probecontext.ProtectedAnnotations)+len(probecontext.ProtectedLabels))
	for _, k := range probecontext.ProtectedAnnotations {
		validations = append(validations, admissionregistrationv1.Validation{
			Expression: unchanged("Annotations", k),
			Message:    probecontext.AnnotationPath(k).String() + ": Forbidden: " + probecontext.ImmutableRule,
			Reason:     &forbidden,
		})
	}
	for _, k := range probecontext.ProtectedLabels {
		validations = append(validations, admissionregistrationv1.Validation{
			Expression: unchanged("Labels", k),
			Message:    probecontext.LabelPath(k).String() + ": Forbidden: " + probecontext.ImmutableRule,
			Reason:     &forbidden,
		})
	}
	validations = append(validations, admissionregistrationv1.Validation{
		Expression: "size(variables.nativeProbesOfEnrolled) == 0",
		MessageExpression: "variables.nativeProbesOfEnrolled.map(f, f + ': Forbidden: ' + " +
			celString(probecontext.EnrolledProbeRule) + ").join('; ')",
		Message: "spec.containers[*].livenessProbe: Forbidden: " + probecontext.EnrolledProbeRule,
		Reason:  &forbidden,
	})
	return policy{
		name: Name,
		rules: []admissionregistrationv1.NamedRuleWithOperations{
			rule(admissionregistrationv1.Update, "pods", "pods/status"),
			rule(admissionregistrationv1.Create, "pods/binding"),
		},
		conditions: notTheOperator(c),
		// old* are empty for pods/binding (a CREATE): every protected key a Binding carries
		// counts as added.
		variables: []admissionregistrationv1.Variable{
			{Name: "oldAnnotations", Expression: "request.operation == 'UPDATE' && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
			{Name: "newAnnotations", Expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
			{Name: "oldLabels", Expression: "request.operation == 'UPDATE' && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"},
			{Name: "newLabels", Expression: "has(object.metadata.labels) ? object.metadata.labels : {}"},
			{Name: "enrolledProbeContext", Expression: enrolledProbeContext()},
			{Name: "nativeProbesOfEnrolled", Expression: "variables.enrolledProbeContext == '' ? [] : " +
				nativeProbesOfEnrolled("initContainers") + " + " + nativeProbesOfEnrolled("containers")},
		},
		validations: validations,
	}.build(c)
}

// policy is what one of the operator's policies says; build makes it and its binding.
type policy struct {
	name        string
	rules       []admissionregistrationv1.NamedRuleWithOperations
	conditions  []admissionregistrationv1.MatchCondition
	variables   []admissionregistrationv1.Variable
	validations []admissionregistrationv1.Validation
}

// build returns the policy and its binding as every one of them is made: failing closed, in every
// namespace, bound to deny. Every default is spelled out, so that the spec as stored equals the
// spec as built and the controller sees no drift.
func (p policy) build(c Config) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   policyType,
		ObjectMeta: objectMeta(p.name, c),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
				ResourceRules:     p.rules,
			},
			MatchConditions: p.conditions,
			Variables:       p.variables,
			Validations:     p.validations,
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   bindingType,
		ObjectMeta: objectMeta(p.name, c),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        p.name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return vap, binding
}

// notTheOperator exempts the manager's own requests (c.OperatorUsername); none when it is unknown.
func notTheOperator(c Config) []admissionregistrationv1.MatchCondition {
	if c.OperatorUsername == "" {
		return nil
	}
	return []admissionregistrationv1.MatchCondition{{
		Name:       "not-the-operator",
		Expression: "request.userInfo.username != " + celString(c.OperatorUsername),
	}}
}

// objectMeta returns the metadata of the policy or binding called name: managed labels, owned by
// the CRD when its UID is known.
func objectMeta(name string, c Config) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name, Labels: maps.Clone(managedLabels)}
	if c.OwnerUID != "" {
		m.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: OwnerCRD, UID: c.OwnerUID,
			// No blockOwnerDeletion: it would need the finalizers permission on the CRD, and
			// nothing is gained by holding the CRD's deletion for these.
		}}
	}
	return m
}

func rule(op admissionregistrationv1.OperationType, resources ...string) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{op},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
			Resources: resources, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
	}}
}

// writes matches every create, update and delete of resources of group, in any version.
func writes(group string, scope admissionregistrationv1.ScopeType, resources ...string) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: resources,
			Scope: ptr.To(scope)},
	}}
}

// unchanged is true when key is absent from both maps, or present in both with one value.
func unchanged(kind, key string) string {
	k := celString(key)
	o, n := "variables.old"+kind, "variables.new"+kind
	return strings.Join([]string{
		"(" + k + " in " + o + ") == (" + k + " in " + n + ")",
		"(!(" + k + " in " + n + ") || " + o + "[" + k + "] == " + n + "[" + k + "])",
	}, " && ")
}

// enrolledProbeContext is the authoritative probe context (ours, else OpenKruise's, as
// probecontext.AnnotationKey picks it) of a pod that was enrolled before the update, or "" for
// every other request: a CREATE of pods/binding, a pods/status UPDATE (which cannot change the
// spec), a pod that is not enrolled. The old pod's: changing the context is refused anyway.
func enrolledProbeContext() string {
	label, ours, kruise := celString(appsv1alpha1.LabelEnrolled), celString(appsv1alpha1.AnnotationProbeContext),
		celString(appsv1alpha1.AnnotationKruiseProbeContext)
	// subResource is absent from the request, rather than empty, for the pod itself.
	return "request.operation == 'UPDATE' && !has(request.subResource) && " + label + " in variables.oldLabels && " +
		"variables.oldLabels[" + label + "] == " + celString(appsv1alpha1.TrueValue) + " ? (" +
		ours + " in variables.oldAnnotations ? variables.oldAnnotations[" + ours + "] : " +
		"(" + kruise + " in variables.oldAnnotations ? variables.oldAnnotations[" + kruise + "] : '')) : ''"
}

// nativeProbesOfEnrolled lists, as field paths, the containers of one list of the new pod
// (containers or initContainers) whose native livenessProbe the update adds or changes while the
// probe context holds their probe, as probecontext.NativeProbeChanges does in the webhook. CEL
// cannot decode the context's JSON: a container counts as held when the context has its name as
// the "name" of an object that "livenessProbe" follows or that ends there. An HTTP header of the
// probes is {"name", "value"} in that order when the webhook wrote it; one written by hand
// "value" first, named like a container of the pod, counts too.
func nativeProbesOfEnrolled(list string) string {
	n, o := "object.spec."+list, "oldObject.spec."+list
	kept := "(has(" + o + ") && " + o + ".exists(o, o.name == c.name && has(o.livenessProbe) && o.livenessProbe == c.livenessProbe))"
	held := `variables.enrolledProbeContext.matches(r'"name"\s*:\s*"' + c.name + r'"\s*(,\s*"livenessProbe"|\})')`
	return "(has(" + n + ") ? " + n + ".filter(c, has(c.livenessProbe) && !" + kept + " && " + held + ")" +
		".map(c, 'spec." + list + "[' + string(" + n + ".map(x, x.name).indexOf(c.name)) + '].livenessProbe') : [])"
}

// celString quotes s as a CEL string literal (CEL accepts Go's escapes).
func celString(s string) string { return strconv.Quote(s) }

var schemaCRD = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
