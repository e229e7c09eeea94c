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

package admissionpolicy

import (
	"context"
	"errors"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=authentication.k8s.io,resources=selfsubjectreviews,verbs=create

// WhoAmI asks the apiserver who the client is (a SelfSubjectReview), so that the manager's
// identity, which the immutability rules exempt, need not be configured: it is the ServiceAccount
// of the Deployment under kustomize and OLM alike, or the kubeconfig's user under `make run`. It
// retries every interval until ctx ends: the manager may start before the apiserver answers.
func WhoAmI(ctx context.Context, c client.Client, interval time.Duration) (string, error) {
	for {
		review := &authenticationv1.SelfSubjectReview{}
		err := c.Create(ctx, review)
		if err == nil {
			if u := review.Status.UserInfo.Username; u != "" {
				return u, nil
			}
			err = errors.New("the SelfSubjectReview returned no username")
		}
		select {
		case <-ctx.Done():
			return "", err
		case <-time.After(interval):
		}
	}
}
