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

package facts

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// namespacePDB is a PodDisruptionBudget of a namespace with its selector parsed.
type namespacePDB struct {
	pdb      rules.PDB
	selector labels.Selector
}

// pdbs returns the PodDisruptionBudgets that select the pod, as the budget reads them (each
// namespace's listed once per reader). A PDB whose selector does not parse, or that sets no
// budget, is skipped: the disruption controller does not use it either.
func (r *Reader) pdbs(ctx context.Context, pod *corev1.Pod) ([]rules.PDB, error) {
	all, ok := r.budgets[pod.Namespace]
	if !ok {
		list := &policyv1.PodDisruptionBudgetList{}
		if err := r.cache.List(ctx, list, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		all = make([]namespacePDB, 0, len(list.Items))
		for i := range list.Items {
			if p, ok := compilePDB(&list.Items[i]); ok {
				all = append(all, p)
			}
		}
		r.budgets[pod.Namespace] = all
	}
	var out []rules.PDB
	set := labels.Set(pod.Labels)
	for _, p := range all {
		if p.selector.Matches(set) {
			out = append(out, p.pdb)
		}
	}
	return out, nil
}

// compilePDB reads a PodDisruptionBudget as the eviction API does: a nil selector selects no
// pod, an empty one every pod of the namespace.
func compilePDB(p *policyv1.PodDisruptionBudget) (namespacePDB, bool) {
	if p.Spec.MinAvailable == nil && p.Spec.MaxUnavailable == nil {
		return namespacePDB{}, false
	}
	sel := labels.Nothing()
	if p.Spec.Selector != nil {
		var err error
		if sel, err = metav1.LabelSelectorAsSelector(p.Spec.Selector); err != nil {
			return namespacePDB{}, false
		}
	}
	out := rules.PDB{Name: p.Name, AlwaysAllow: ptr.Deref(p.Spec.UnhealthyPodEvictionPolicy, "") == policyv1.AlwaysAllow}
	if p.Spec.MaxUnavailable != nil {
		out.MaxUnavailable = ptr.To(*p.Spec.MaxUnavailable)
	} else {
		out.MinAvailable = ptr.To(*p.Spec.MinAvailable)
	}
	return namespacePDB{pdb: out, selector: sel}, true
}
