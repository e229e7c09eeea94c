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

// Package results reads a node's probe results for the real-node suites (test/e2e, test/olm) the
// way the manager does: from the node's NodePodProbeReport once a daemon has written it, from the
// NodePodProbe's own status otherwise (a daemon from before the report).
package results

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Of returns the node's NodePodProbe with the results the manager reads in its status.
func Of(ctx context.Context, c client.Reader, node string) (*appsv1alpha1.NodePodProbe, error) {
	npp := &appsv1alpha1.NodePodProbe{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, npp); err != nil {
		return nil, err
	}
	rep := &appsv1alpha1.NodePodProbeReport{}
	if err := c.Get(ctx, client.ObjectKey{Name: node}, rep); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
		return npp, nil
	}
	return npp.WithReport(rep), nil
}
