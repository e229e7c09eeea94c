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
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

func TestProtectedChanges(t *testing.T) {
	ctxKey := appsv1alpha1.AnnotationProbeContext
	enrolled := appsv1alpha1.LabelEnrolled
	base := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Annotations: map[string]string{ctxKey: `[]`, appsv1alpha1.AnnotationEnabled: "true", "other": "x"},
			Labels:      map[string]string{enrolled: "true", "app": "web"},
		}
	}
	cases := []struct {
		name   string
		mutate func(m *metav1.ObjectMeta)
		want   []string // field paths, in order
	}{
		{name: "nothing changed", mutate: func(*metav1.ObjectMeta) {}},
		{name: "other annotation and label changed", mutate: func(m *metav1.ObjectMeta) {
			m.Annotations["other"] = "y"
			m.Labels["app"] = "db"
		}},
		{name: "probe context changed", mutate: func(m *metav1.ObjectMeta) { m.Annotations[ctxKey] = `[{}]` },
			want: []string{"metadata.annotations[" + ctxKey + "]"}},
		{name: "probe context removed", mutate: func(m *metav1.ObjectMeta) { delete(m.Annotations, ctxKey) },
			want: []string{"metadata.annotations[" + ctxKey + "]"}},
		{name: "kruise context added", mutate: func(m *metav1.ObjectMeta) { m.Annotations[appsv1alpha1.AnnotationKruiseProbeContext] = `[]` },
			want: []string{"metadata.annotations[" + appsv1alpha1.AnnotationKruiseProbeContext + "]"}},
		{name: "signature added", mutate: func(m *metav1.ObjectMeta) { m.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = "v1.1.x" },
			want: []string{"metadata.annotations[" + appsv1alpha1.AnnotationProbeContextSignature + "]"}},
		{name: "seal added", mutate: func(m *metav1.ObjectMeta) { m.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = "v1.k.x" },
			want: []string{"metadata.annotations[" + appsv1alpha1.AnnotationProbeContextSeal + "]"}},
		{name: "opt-in switched off and alias added", mutate: func(m *metav1.ObjectMeta) {
			m.Annotations[appsv1alpha1.AnnotationEnabled] = "false"
			m.Annotations[appsv1alpha1.AnnotationKruiseEnabled] = "true"
		}, want: []string{
			"metadata.annotations[" + appsv1alpha1.AnnotationEnabled + "]",
			"metadata.annotations[" + appsv1alpha1.AnnotationKruiseEnabled + "]",
		}},
		{name: "all annotations dropped", mutate: func(m *metav1.ObjectMeta) { m.Annotations = nil }, want: []string{
			"metadata.annotations[" + ctxKey + "]", "metadata.annotations[" + appsv1alpha1.AnnotationEnabled + "]",
		}},
		{name: "enrolled label removed", mutate: func(m *metav1.ObjectMeta) { delete(m.Labels, enrolled) },
			want: []string{"metadata.labels[" + enrolled + "]"}},
		{name: "enrolled label set to the empty string", mutate: func(m *metav1.ObjectMeta) { m.Labels[enrolled] = "" },
			want: []string{"metadata.labels[" + enrolled + "]"}},
		{name: "mode label added to a pod 0.1.0 admitted", mutate: func(m *metav1.ObjectMeta) { m.Labels[appsv1alpha1.LabelMode] = "Shadow" },
			want: []string{"metadata.labels[" + appsv1alpha1.LabelMode + "]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, updated := base(), base()
			tc.mutate(&updated)
			errs := ProtectedChanges(&old, &updated)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
				if !strings.Contains(e.Error(), "Forbidden: "+ImmutableRule) {
					t.Errorf("message %q does not state the rule", e.Error())
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("fields = %v, want %v", got, tc.want)
			}
		})
	}
	// Adding a key to a pod that had none at all (no annotations, no labels) is a change too.
	errs := ProtectedChanges(&metav1.ObjectMeta{}, &metav1.ObjectMeta{Labels: map[string]string{enrolled: "true"}})
	if len(errs) != 1 || errs[0].Field != "metadata.labels["+enrolled+"]" {
		t.Errorf("adding the label to a bare pod: %v", errs)
	}
}

func TestValidateOptIn(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		want        string // aggregated error, "" for none
	}{
		{name: "none"},
		{name: "true", annotations: map[string]string{appsv1alpha1.AnnotationEnabled: "true"}},
		{name: "false", annotations: map[string]string{appsv1alpha1.AnnotationEnabled: "false"}},
		{name: "alias true", annotations: map[string]string{appsv1alpha1.AnnotationKruiseEnabled: "true"}},
		{name: "yes", annotations: map[string]string{appsv1alpha1.AnnotationEnabled: "yes"},
			want: `metadata.annotations[enhancedliveness.io/enabled]: Unsupported value: "yes": supported values: "true", "false"`},
		{name: "capitalised", annotations: map[string]string{appsv1alpha1.AnnotationEnabled: "True"},
			want: `Unsupported value: "True"`},
		{name: "empty", annotations: map[string]string{appsv1alpha1.AnnotationEnabled: ""},
			want: `metadata.annotations[enhancedliveness.io/enabled]: Unsupported value: ""`},
		{name: "alias 1", annotations: map[string]string{appsv1alpha1.AnnotationKruiseEnabled: "1"},
			want: `metadata.annotations[apps.kruise.io/using-enhanced-liveness]: Unsupported value: "1": supported values: "true", "false"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateOptIn(tc.annotations)
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("unexpected errors: %v", errs)
			case tc.want != "" && (len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tc.want)):
				t.Errorf("errors %v, want %q", errs, tc.want)
			}
		})
	}
}
