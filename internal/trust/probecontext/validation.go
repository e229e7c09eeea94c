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

package probecontext

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// SetDefaults fills the fields the apiserver defaults on a probe in a pod spec (podutil's
// defaults). A probe moved out of the spec has them already; one written into the annotation by
// hand may not.
func SetDefaults(p *corev1.Probe) {
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = podutil.DefaultProbeTimeoutSeconds
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = podutil.DefaultProbePeriodSeconds
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = podutil.DefaultProbeSuccessThreshold
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = podutil.DefaultProbeFailureThreshold
	}
	if p.HTTPGet != nil {
		podutil.DefaultHTTPGet(p.HTTPGet)
	}
	if g := p.GRPC; g != nil && g.Service == nil {
		g.Service = new("")
	}
}

// The apiserver's wording, so that a denied pod reads as if the apiserver had rejected it.
const (
	msgNoHandler        = "must specify a handler type"
	msgManyHandlers     = "may not specify more than 1 handler type"
	msgNegative         = "must be greater than or equal to 0"
	msgLivenessSuccess  = "must be 1"
	msgPositiveDuration = "must be greater than 0"
)

var supportedSchemes = []string{string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS)}

// ValidateLiveness checks a liveness probe (defaults already applied) with the apiserver's rules
// and messages, plus one rule the apiserver leaves to the kubelet: a named port must be a port of
// ctr. path is where the probe sits (spec.containers[i].livenessProbe or the annotation entry).
func ValidateLiveness(p *corev1.Probe, ctr *corev1.Container, path *field.Path) field.ErrorList {
	if p == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	errs := validateHandler(&p.ProbeHandler, ctr, path)
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds},
		{"timeoutSeconds", p.TimeoutSeconds},
		{"periodSeconds", p.PeriodSeconds},
		{"successThreshold", p.SuccessThreshold},
		{"failureThreshold", p.FailureThreshold},
	} {
		if f.value < 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, msgNegative))
		}
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, msgPositiveDuration))
	}
	if p.SuccessThreshold != 1 {
		errs = append(errs, field.Invalid(path.Child("successThreshold"), p.SuccessThreshold, msgLivenessSuccess))
	}
	return errs
}

func validateHandler(h *corev1.ProbeHandler, ctr *corev1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	// Only the first handler is validated further, as the apiserver does.
	one := func(name string, validate func(*field.Path) field.ErrorList) {
		if n > 0 {
			errs = append(errs, field.Forbidden(path.Child(name), msgManyHandlers))
			return
		}
		n++
		errs = append(errs, validate(path.Child(name))...)
	}
	if h.Exec != nil {
		one("exec", func(p *field.Path) field.ErrorList {
			if len(h.Exec.Command) == 0 {
				return field.ErrorList{field.Required(p.Child("command"), "")}
			}
			return nil
		})
	}
	if h.HTTPGet != nil {
		one("httpGet", func(p *field.Path) field.ErrorList { return validateHTTPGet(h.HTTPGet, ctr, p) })
	}
	if h.TCPSocket != nil {
		one("tcpSocket", func(p *field.Path) field.ErrorList {
			return validatePort(h.TCPSocket.Port, ctr, p.Child("port"))
		})
	}
	if h.GRPC != nil {
		one("grpc", func(p *field.Path) field.ErrorList {
			return validatePort(intstr.FromInt32(h.GRPC.Port), ctr, p.Child("port"))
		})
	}
	if n == 0 {
		errs = append(errs, field.Required(path, msgNoHandler))
	}
	return errs
}

func validateHTTPGet(h *corev1.HTTPGetAction, ctr *corev1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(path.Child("path"), ""))
	}
	errs = append(errs, validatePort(h.Port, ctr, path.Child("port"))...)
	if h.Scheme != corev1.URISchemeHTTP && h.Scheme != corev1.URISchemeHTTPS {
		errs = append(errs, field.NotSupported(path.Child("scheme"), h.Scheme, supportedSchemes))
	}
	for _, hdr := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(hdr.Name) {
			errs = append(errs, field.Invalid(path.Child("httpHeaders"), hdr.Name, msg))
		}
	}
	return errs
}

func validatePort(port intstr.IntOrString, ctr *corev1.Container, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch port.Type {
	case intstr.Int:
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(path, port.IntValue(), msg))
		}
	case intstr.String:
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(path, port.StrVal, msg))
		}
		if len(errs) == 0 && ctr != nil {
			if _, ok := podutil.NamedPort(ctr, port.StrVal); !ok {
				errs = append(errs, field.Invalid(path, port.StrVal,
					fmt.Sprintf("must be the name of a port of container %q", ctr.Name)))
			}
		}
	default:
		errs = append(errs, field.InternalError(path, fmt.Errorf("unknown type: %v", port.Type)))
	}
	return errs
}

// Resolve returns a copy of p, defaulted, with named httpGet/tcpSocket ports replaced by the
// container's port numbers, ready for the node daemon. It fails when a named port is missing.
func Resolve(p *corev1.Probe, ctr *corev1.Container) (*corev1.Probe, error) {
	out := p.DeepCopy()
	SetDefaults(out)
	resolve := func(port *intstr.IntOrString) error {
		if port.Type != intstr.String {
			return nil
		}
		n, ok := podutil.NamedPort(ctr, port.StrVal)
		if !ok {
			return fmt.Errorf("container %q has no port named %q", ctr.Name, port.StrVal)
		}
		*port = intstr.FromInt32(n)
		return nil
	}
	if out.HTTPGet != nil {
		if err := resolve(&out.HTTPGet.Port); err != nil {
			return nil, err
		}
	}
	if out.TCPSocket != nil {
		if err := resolve(&out.TCPSocket.Port); err != nil {
			return nil, err
		}
	}
	return out, nil
}
