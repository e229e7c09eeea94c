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

package v1alpha1

// Annotations and labels shared by the webhooks, the controllers and the node daemon.
const (
	// AnnotationEnabled opts a pod in to enhanced liveness.
	AnnotationEnabled = "enhancedliveness.io/enabled"
	// AnnotationKruiseEnabled is OpenKruise's opt-in key, accepted as an alias.
	AnnotationKruiseEnabled = "apps.kruise.io/using-enhanced-liveness"

	// AnnotationProbeContext holds the moved liveness probes:
	// JSON [{"name": <container>, "livenessProbe": <corev1.Probe>}].
	AnnotationProbeContext = "enhancedliveness.io/container-probe-context"
	// AnnotationKruiseProbeContext is OpenKruise's key for the same content, also read.
	AnnotationKruiseProbeContext = "apps.kruise.io/container-probe-context"
	// AnnotationProbeContextSignature is the pod webhook's signature of the probe context it
	// admitted, bound to the pod's namespace, name and admission time (internal/trust/signature).
	AnnotationProbeContextSignature = "enhancedliveness.io/probe-context-signature"
	// AnnotationProbeContextSeal is the manager's signature of an admitted probe context, bound
	// to the pod's UID; the node daemon runs only probes whose pod carries a seal that verifies.
	AnnotationProbeContextSeal = "enhancedliveness.io/probe-context-seal"

	// AnnotationRestartDisabled is the per-pod emergency switch: keep probing, never restart.
	AnnotationRestartDisabled = "enhancedliveness.io/restart-disabled"

	// AnnotationAvoidedNodes lists, comma-separated and sorted, the nodes the pod webhook steered
	// a new pod away from with a preferred node affinity term: the nodes where its controller's
	// pods were evicted because their restarts did not help there (a policy's
	// status.recentEvictions). Set by the pod webhook at creation only.
	AnnotationAvoidedNodes = "enhancedliveness.io/avoided-nodes"

	// LabelEnrolled marks pods whose liveness probes the operator runs; the manager caches only these.
	LabelEnrolled = "enhancedliveness.io/enrolled"

	// LabelMode records the mode the pod webhook admitted an enrolled pod in, which the pod keeps
	// for its life whatever its policies say later: ModeEnforce (its liveness probes were moved
	// to the operator, which restarts it) or ModeShadow (it kept its native liveness probes: the
	// kubelet restarts it, the operator only probes beside it and never restarts it). An enrolled
	// pod without it was admitted by 0.1.0, which moved the probes in every mode: it is Enforce.
	LabelMode   = "enhancedliveness.io/mode"
	ModeEnforce = "Enforce"
	ModeShadow  = "Shadow"

	// LabelCRRPodUID and LabelCRRNodeName are set on every ContainerRecreateRequest by its webhook:
	// a node daemon watches the requests labelled with its node. Whether a request is still active
	// is its phase (ContainerRecreateRequest.Active), not a label.
	LabelCRRPodUID   = "crr.enhancedliveness.io/pod-uid"
	LabelCRRNodeName = "crr.enhancedliveness.io/node-name"

	// LabelManagedBy is app.kubernetes.io/managed-by; ManagedByDecisionController is its value on
	// requests the decision controller created (as opposed to hand-made ones).
	LabelManagedBy              = "app.kubernetes.io/managed-by"
	ManagedByDecisionController = "enhanced-liveness-decision-controller"

	// ManagedByOperator is the app.kubernetes.io/managed-by value of the objects the manager
	// creates and keeps in shape itself (the daemon DaemonSet, the immutability admission policy
	// and its binding); the manager caches only objects of those kinds that carry it.
	ManagedByOperator = "enhanced-liveness-operator"

	// AnnotationCRRProbe names the probe whose failure caused a request (decision controller only).
	AnnotationCRRProbe = "crr.enhancedliveness.io/probe"

	// DefaultOperatorNamespace is where the manager, the daemons and their Leases run unless the
	// POD_NAMESPACE environment variable (downward API) or a flag says otherwise.
	DefaultOperatorNamespace = "enhanced-liveness-system"

	// DaemonLeasePrefix + node name is the coordination.k8s.io Lease, in the operator namespace,
	// that the node daemon renews every DaemonLeaseRenewSeconds as its heartbeat. Its
	// holderIdentity is the node name. The decision controller holds restarts on a node whose
	// Lease is missing or whose renewTime + leaseDurationSeconds has passed.
	DaemonLeasePrefix       = "enhanced-liveness-daemon-"
	DaemonLeaseRenewSeconds = 10
	DaemonLeaseDuration     = 40

	// TrueValue is the value of boolean labels and annotations; FalseValue is the only other
	// value the opt-in annotations accept.
	TrueValue  = "true"
	FalseValue = "false"
)

// AdmittedInShadow reports whether an enrolled pod with these labels was admitted in Shadow mode
// (LabelMode): the operator never restarts it.
func AdmittedInShadow(podLabels map[string]string) bool { return podLabels[LabelMode] == ModeShadow }
