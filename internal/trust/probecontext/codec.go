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

// Package probecontext holds the probe-context annotation codec, the apiserver's probe defaulting and
// validation rules, and named-port resolution. The Pod webhook, the probe-mapping controller and
// the CRR webhook share it so that they agree on what an enrolled pod's liveness probes are.
package probecontext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// MaxAnnotationBytes bounds the probe-context annotation. The whole annotation map of an object
// may hold 256 KiB; one annotation bigger than a quarter of that is a mistake, not a probe list.
const MaxAnnotationBytes = 64 * 1024

// ContainerProbe is one entry of the probe-context annotation.
type ContainerProbe struct {
	// Name is the container's name.
	Name string `json:"name"`
	// LivenessProbe is the container's liveness probe, moved out of its spec.
	LivenessProbe *corev1.Probe `json:"livenessProbe"`
}

// Context is the decoded annotation and the key it was read from.
type Context struct {
	// Key is the annotation the entries came from (ours or OpenKruise's); empty when the pod has none.
	Key     string
	Entries []ContainerProbe
}

// Lookup returns the entry of a container, or nil.
func (c Context) Lookup(container string) *ContainerProbe {
	for i := range c.Entries {
		if c.Entries[i].Name == container {
			return &c.Entries[i]
		}
	}
	return nil
}

// ProbeName is the stable name of a container's probe in a NodePodProbe.
func ProbeName(podName, container string) string {
	return podName + "-" + container
}

// AnnotationKey returns which probe-context annotation of the pod is authoritative: ours when
// present, else OpenKruise's, else "".
func AnnotationKey(annotations map[string]string) string {
	if _, ok := annotations[appsv1alpha1.AnnotationProbeContext]; ok {
		return appsv1alpha1.AnnotationProbeContext
	}
	if _, ok := annotations[appsv1alpha1.AnnotationKruiseProbeContext]; ok {
		return appsv1alpha1.AnnotationKruiseProbeContext
	}
	return ""
}

// FromAnnotations decodes the authoritative probe-context annotation. A pod with none has an
// empty Context and no error. Errors are field errors on the annotation.
func FromAnnotations(annotations map[string]string) (Context, field.ErrorList) {
	key := AnnotationKey(annotations)
	if key == "" {
		return Context{}, nil
	}
	path := field.NewPath("metadata", "annotations").Key(key)
	entries, errs := Decode([]byte(annotations[key]), path)
	return Context{Key: key, Entries: entries}, errs
}

// Decode parses the annotation value: a JSON array of {"name", "livenessProbe"} objects.
// Unknown or duplicated JSON fields, a missing name or probe, and a container named twice are
// errors; so is a value over MaxAnnotationBytes. Decode never panics, whatever the input.
func Decode(data []byte, path *field.Path) ([]ContainerProbe, field.ErrorList) {
	if len(data) > MaxAnnotationBytes {
		return nil, field.ErrorList{field.TooLong(path, "", MaxAnnotationBytes)}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, field.ErrorList{field.Invalid(path, shorten(data),
			`must be a JSON array of {"name": <container>, "livenessProbe": <probe>}`)}
	}
	var entries []ContainerProbe
	strictErrs, err := sigsjson.UnmarshalStrict(trimmed, &entries)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(path, shorten(data), "malformed JSON: "+err.Error())}
	}
	var errs field.ErrorList
	for _, se := range strictErrs {
		errs = append(errs, field.Invalid(path, shorten(data), se.Error()))
	}
	seen := make(map[string]struct{}, len(entries))
	for i, e := range entries {
		p := path.Index(i)
		switch e.Name {
		case "":
			errs = append(errs, field.Required(p.Child("name"), "the container's name"))
		default:
			if _, dup := seen[e.Name]; dup {
				errs = append(errs, field.Duplicate(p.Child("name"), e.Name))
			}
			seen[e.Name] = struct{}{}
		}
		if e.LivenessProbe == nil {
			errs = append(errs, field.Required(p.Child("livenessProbe"), ""))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return entries, nil
}

// Encode renders entries as the annotation value. It is deterministic for equal input.
func Encode(entries []ContainerProbe) (string, error) {
	if entries == nil {
		entries = []ContainerProbe{}
	}
	b, err := json.Marshal(entries)
	if err != nil {
		return "", err
	}
	if len(b) > MaxAnnotationBytes {
		return "", fmt.Errorf("probe context of %d bytes exceeds %d bytes", len(b), MaxAnnotationBytes)
	}
	return string(b), nil
}

// shorten keeps error messages readable when the offending value is large.
func shorten(b []byte) string {
	const limit = 64
	if len(b) <= limit {
		return string(b)
	}
	return strings.ToValidUTF8(string(b[:limit]), "") + "..."
}
