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

package v1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
)

// containerError ties a field error to the container it concerns, for the denial message.
type containerError struct {
	container string
	err       *field.Error
}

// enroll moves the liveness probes of pod's containers into the probe-context annotation and
// labels the pod enrolled in mode, or returns an Invalid error naming each container and field at
// fault. In Shadow mode the probes are copied instead: every enrolled container keeps its native
// probe, and one whose probe only the annotation holds gets it in its spec too, so that the
// kubelet stays in charge. Only containers the kubelet starts again after a CRI stop are enrolled:
// the others keep their native probe, and a warning says why. A pod whose entry would not fit the
// NodePodProbe schema (appsv1alpha1.ValidatePodProbe's limits) keeps its native probes too, with
// a warning naming the limit. enrolled is false when nothing is left to probe.
func enroll(pod *corev1.Pod, mode policyv1alpha1.PolicyMode) (enrolled bool, warnings []string, err error) {
	pctx, errs := probecontext.FromAnnotations(pod.Annotations)
	if len(errs) > 0 {
		return false, nil, invalid(pod, wrap("", errs))
	}
	annPath := probecontext.AnnotationPath(pctx.Key)
	cerrs := checkAnnotated(pod, pctx)
	moves, warnings, merrs := nativeMoves(pod, pctx)
	cerrs = append(cerrs, merrs...)
	if len(cerrs) > 0 {
		return false, warnings, invalid(pod, cerrs)
	}

	// The pod's entry must fit the NodePodProbe schema, or the manager could not hand it to the
	// daemon. Probes the creator wrote into the annotation have no native probe to fall back
	// to: they are denied; native probes stay where they are, with a warning.
	entries := pctx.Entries
	added := 0
	for _, m := range moves {
		if !m.inContext {
			added++
		}
	}
	if n := len(entries) + added; n > appsv1alpha1.MaxProbesPerPod {
		if len(pctx.Entries) > 0 {
			return false, warnings, invalid(pod, wrap("", field.ErrorList{field.TooMany(annPath, n, appsv1alpha1.MaxProbesPerPod)}))
		}
		return false, append(warnings, fmt.Sprintf("not enrolled in enhanced liveness: the pod has %d liveness probes and "+
			"a NodePodProbe holds at most %d per pod (spec.podProbes[].probes: maxItems %d); every container keeps its "+
			"native livenessProbe", n, appsv1alpha1.MaxProbesPerPod, appsv1alpha1.MaxProbesPerPod)), nil
	}
	for _, m := range moves {
		if !m.inContext {
			entries = append(entries, probecontext.ContainerProbe{Name: m.c.Name, LivenessProbe: m.probe})
		}
	}
	if len(entries) == 0 {
		return false, warnings, nil // nothing to probe: not enrolled, the manager need not cache it
	}
	if added > 0 {
		value, err := probecontext.Encode(entries)
		if err != nil {
			if len(pctx.Entries) > 0 {
				return false, warnings, invalid(pod, wrap("", field.ErrorList{field.TooLong(
					probecontext.AnnotationPath(appsv1alpha1.AnnotationProbeContext), "", probecontext.MaxAnnotationBytes)}))
			}
			return false, append(warnings, fmt.Sprintf("not enrolled in enhanced liveness: the pod's liveness probes "+
				"take more than %d bytes (annotation %s: maxLength %d); every container keeps its native livenessProbe",
				probecontext.MaxAnnotationBytes, appsv1alpha1.AnnotationProbeContext, probecontext.MaxAnnotationBytes)), nil
		}
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[appsv1alpha1.AnnotationProbeContext] = value
	}
	if mode == policyv1alpha1.ModeShadow {
		warnings = append(warnings, keepNative(pod, pctx)...)
	} else {
		for _, m := range moves {
			m.c.LivenessProbe = nil
		}
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[appsv1alpha1.LabelEnrolled] = appsv1alpha1.TrueValue
	pod.Labels[appsv1alpha1.LabelMode] = string(mode)
	return true, warnings, nil
}

// keepNative gives each container whose liveness probe only the probe-context annotation holds
// that probe in its spec as well (Shadow mode: the kubelet keeps liveness), and says so.
func keepNative(pod *corev1.Pod, pctx probecontext.Context) []string {
	var warnings []string
	for _, e := range pctx.Entries {
		pc, ok := podutil.FindRestartable(&pod.Spec, e.Name)
		if !ok || pc.Container.LivenessProbe != nil {
			continue
		}
		lp := e.LivenessProbe.DeepCopy()
		probecontext.SetDefaults(lp)
		pc.Container.LivenessProbe = lp
		warnings = append(warnings, fmt.Sprintf("container %q: its liveness probe from annotation %s is set as its "+
			"livenessProbe too: the pod is admitted in Shadow mode, where the kubelet keeps liveness", e.Name, pctx.Key))
	}
	return warnings
}

// checkAnnotated validates the probes the creator wrote into the probe-context annotation: each
// names a container the kubelet starts again after a CRI stop and is a valid liveness probe.
func checkAnnotated(pod *corev1.Pod, pctx probecontext.Context) []containerError {
	var cerrs []containerError
	annPath := probecontext.AnnotationPath(pctx.Key)
	for i, e := range pctx.Entries {
		p := annPath.Index(i)
		pc, ok := podutil.FindRestartable(&pod.Spec, e.Name)
		if !ok {
			cerrs = append(cerrs, wrap(e.Name, field.ErrorList{field.Invalid(p.Child("name"), e.Name,
				"must be the name of a container or of a restartable init container of the pod")})...)
			continue
		}
		if !podutil.RestartedAfterStop(&pod.Spec, pc) {
			// The creator asked for something that cannot work: say so rather than drop it.
			cerrs = append(cerrs, wrap(e.Name, field.ErrorList{field.Invalid(p.Child("name"), e.Name,
				"cannot be probed by the operator: "+notRestartedReason(pod, pc)+
					"; keep its livenessProbe in the container spec")})...)
			continue
		}
		lp := e.LivenessProbe.DeepCopy()
		probecontext.SetDefaults(lp)
		cerrs = append(cerrs, wrap(e.Name, probecontext.ValidateLiveness(lp, pc.Container, p.Child("livenessProbe")))...)
	}
	return cerrs
}

// nativeMoves lists the native liveness probes to move into the annotation, defaulted and
// validated; a container the kubelet does not start again after a CRI stop keeps its probe, with
// a warning. One that also has an annotated probe is an error, unless the two are the same probe:
// the webhook's own copy, seen again when it is called a second time (reinvocation) for a pod it
// admitted in Shadow mode.
func nativeMoves(pod *corev1.Pod, pctx probecontext.Context) (moves []move, warnings []string, cerrs []containerError) {
	inAnnotation := make(map[string]*corev1.Probe, len(pctx.Entries))
	for _, e := range pctx.Entries {
		inAnnotation[e.Name] = e.LivenessProbe
	}
	for _, pc := range podutil.RestartableContainers(&pod.Spec) {
		c := pc.Container
		if c.LivenessProbe == nil {
			continue
		}
		path := pc.Path.Child("livenessProbe")
		lp := c.LivenessProbe.DeepCopy()
		probecontext.SetDefaults(lp)
		if annotated, ok := inAnnotation[c.Name]; ok {
			if annotated != nil && sameProbe(lp, annotated) {
				moves = append(moves, move{c: c, probe: lp, inContext: true})
				continue
			}
			cerrs = append(cerrs, wrap(c.Name, field.ErrorList{field.Forbidden(path,
				fmt.Sprintf("the container already has a liveness probe in annotation %s", pctx.Key))})...)
			continue
		}
		if !podutil.RestartedAfterStop(&pod.Spec, pc) {
			warnings = append(warnings, fmt.Sprintf("container %q keeps its native livenessProbe and is not enrolled in "+
				"enhanced liveness: %s", c.Name, notRestartedReason(pod, pc)))
			continue
		}
		cerrs = append(cerrs, wrap(c.Name, probecontext.ValidateLiveness(lp, c, path))...)
		moves = append(moves, move{c: c, probe: lp})
	}
	return moves, warnings, cerrs
}

// sameProbe compares a defaulted native probe with an annotated one, defaulted alike.
func sameProbe(native, annotated *corev1.Probe) bool {
	a := annotated.DeepCopy()
	probecontext.SetDefaults(a)
	return equality.Semantic.DeepEqual(native, a)
}

// move is a native liveness probe the webhook moves (Enforce) or copies (Shadow) into the probe
// context; inContext: the context holds it already.
type move struct {
	c         *corev1.Container
	probe     *corev1.Probe
	inContext bool
}

// notRestartedReason explains why the kubelet would not start a container again after the
// operator stops it.
func notRestartedReason(pod *corev1.Pod, pc podutil.RestartableContainer) string {
	whose := "the pod's restartPolicy is " + string(podutil.EffectiveRestartPolicy(&pod.Spec, pc.Container))
	if pc.Container.RestartPolicy != nil {
		whose = "its restartPolicy is " + string(*pc.Container.RestartPolicy)
	}
	return whose + ", and the operator restarts a container by stopping it, which the kubelet follows with a " +
		"new start only under restartPolicy Always (a container that exits 0 on SIGTERM would stay stopped)"
}

func wrap(container string, errs field.ErrorList) []containerError {
	out := make([]containerError, 0, len(errs))
	for _, e := range errs {
		out = append(out, containerError{container: container, err: e})
	}
	return out
}

// invalid builds the apiserver-style Invalid error, with each message prefixed by its container.
func invalid(pod *corev1.Pod, cerrs []containerError) error {
	name := pod.Name
	if name == "" {
		name = pod.GenerateName
	}
	list := make(field.ErrorList, 0, len(cerrs))
	parts := make([]string, 0, len(cerrs))
	for _, ce := range cerrs {
		list = append(list, ce.err)
		if ce.container != "" {
			parts = append(parts, fmt.Sprintf("container %q: %s", ce.container, ce.err.Error()))
		} else {
			parts = append(parts, ce.err.Error())
		}
	}
	se := apierrors.NewInvalid(podGK, name, list)
	se.ErrStatus.Message = fmt.Sprintf("Pod %q is invalid: %s", name, strings.Join(parts, "; "))
	return se
}
