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

package monitoring

import (
	"context"
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/ssa"
)

// keep creates desired, or puts back the spec, the manager's labels and the owner of the live
// object. The whole spec is written, not merged: an alert removed or an expression weakened by
// someone else would otherwise stay. Other labels and annotations are left alone (a Prometheus
// ruleSelector label added by an admin survives).
func keep(ctx context.Context, res dynamic.ResourceInterface, desired *unstructured.Unstructured) error {
	live, err := res.Get(ctx, desired.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := res.Create(ctx, desired, metav1.CreateOptions{FieldManager: ssa.FieldOwner}); err != nil {
			return fmt.Errorf("creating %s %s: %w", desired.GetKind(), desired.GetName(), err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	want := live.DeepCopy()
	want.Object["spec"] = desired.Object["spec"]
	labels := want.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, desired.GetLabels())
	want.SetLabels(labels)
	if refs := desired.GetOwnerReferences(); len(refs) > 0 {
		want.SetOwnerReferences(refs)
	}
	// The API server defaults fields of these CRDs; a dry run tells whether the desired object,
	// once defaulted, differs from the live one, so an object in shape is never written.
	dry, err := res.Update(ctx, want, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: ssa.FieldOwner})
	if err != nil {
		return fmt.Errorf("checking %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	if same(dry, live) {
		return nil
	}
	if _, err := res.Update(ctx, want, metav1.UpdateOptions{FieldManager: ssa.FieldOwner}); err != nil {
		return fmt.Errorf("restoring %s %s: %w", desired.GetKind(), desired.GetName(), err)
	}
	return nil
}

// same compares what keep writes: the spec, the labels and the owner references.
func same(a, b *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(a.Object["spec"], b.Object["spec"]) &&
		maps.Equal(a.GetLabels(), b.GetLabels()) &&
		equality.Semantic.DeepEqual(a.GetOwnerReferences(), b.GetOwnerReferences())
}
