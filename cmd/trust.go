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

package main

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/trust"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probesig"
)

// setupProbeTrust adds the probe trust boundary of the manager: the signing key every replica
// holds (the pod webhook signs admissions with it), and, on the leader, the seal controller and
// the controller that keeps the trust ConfigMap the daemons verify with. It returns the signing
// key and the trusted key set, for the pod webhook and the probe-mapping controller.
func setupProbeTrust(mgr ctrl.Manager, namespace, secretName string) (*probesig.Store, *probesig.Trust, error) {
	keys := &probesig.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Namespace: namespace, Name: secretName}
	if err := mgr.Add(keys); err != nil {
		return nil, nil, fmt.Errorf("adding the probe-context signing key: %w", err)
	}
	if err := mgr.AddReadyzCheck("probe-signing-key", keys.Checker); err != nil {
		return nil, nil, fmt.Errorf("adding the signing key ready check: %w", err)
	}
	trusted := &probesig.Trust{Reader: mgr.GetClient(), Namespace: namespace, Keys: keys}
	if err := (&trust.SealReconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("probe-seal-controller"),
		Keys: keys, Trust: trusted, OperatorNamespace: namespace,
	}).SetupWithManager(mgr); err != nil {
		return nil, nil, fmt.Errorf("setting up the seal controller: %w", err)
	}
	if err := (&trust.KeySetReconciler{Client: mgr.GetClient(), Keys: keys, Namespace: namespace}).SetupWithManager(mgr); err != nil {
		return nil, nil, fmt.Errorf("setting up the trust key set controller: %w", err)
	}
	return keys, trusted, nil
}
