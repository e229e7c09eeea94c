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

// Package managercache owns the manager's cache: what each informer holds (Options), the
// transform that strips enrolled pods to the fields the controllers read (StripPod, with the
// fields it keeps declared in PodFieldsKept) and the field indexes (AddIndexes). The manager and
// every envtest suite that starts its controllers build their cache from here, so the suites run
// against what the manager really caches.
package managercache

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// Config says what the manager's cache holds.
type Config struct {
	// OperatorNamespace is the only namespace whose DaemonSets and Leases are cached: the node
	// daemon's DaemonSet and the daemons' Leases live there.
	OperatorNamespace string
	// Strip drops from cached objects what the manager never reads: managedFields of every
	// object and of enrolled pods everything StripPod drops (--strip-cached-objects).
	Strip bool
}

// Options is the manager's cache:
//   - Pods: only enrolled ones, so a cluster's other pods cost the manager nothing; code that
//     must see any pod, or all of one, reads with the manager's API reader;
//   - DaemonSets: only the daemon's, in the operator namespace (no cluster-wide DaemonSet access);
//   - Leases: only the operator namespace's, where the daemons renew theirs (every node's kubelet
//     Lease in kube-node-lease would otherwise be cached and watched for nothing);
//   - ValidatingAdmissionPolicies and their bindings: only the ones the manager keeps in shape;
//   - ConfigMaps: only the trust ConfigMap of public keys the manager keeps for the daemons.
//
// Every other kind is cached whole, managedFields stripped: NodePodProbes (they name pods only),
// NodePodProbeReports (one per node; a report holds only what is not passing), requests,
// policies, workloads.
//
// Cached objects are never written back: an update from a stripped copy would clear what was
// dropped.
func Options(c Config) cache.Options {
	managed := labels.SelectorFromSet(labels.Set{appsv1alpha1.LabelManagedBy: appsv1alpha1.ManagedByOperator})
	operatorNamespace := map[string]cache.Config{c.OperatorNamespace: {}}
	pods := cache.ByObject{
		Label: labels.SelectorFromSet(labels.Set{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue}),
	}
	var strip toolscache.TransformFunc
	if c.Strip {
		pods.Transform = StripPod
		strip = cache.TransformStripManagedFields()
	}
	return cache.Options{
		DefaultTransform: strip,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:           pods,
			&appsv1.DaemonSet{}:     {Namespaces: operatorNamespace, Label: managed},
			&coordinationv1.Lease{}: {Namespaces: operatorNamespace},
			&admissionregistrationv1.ValidatingAdmissionPolicy{}:        {Label: managed},
			&admissionregistrationv1.ValidatingAdmissionPolicyBinding{}: {Label: managed},
			&corev1.ConfigMap{}: {Namespaces: operatorNamespace,
				Field: fields.OneTermEqualSelector("metadata.name", signature.TrustConfigMapName)},
		},
	}
}
