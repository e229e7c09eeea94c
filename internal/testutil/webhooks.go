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

package testutil

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// WebhookInstallOptions returns envtest options that install only the named webhooks of
// config/webhook/manifests.yaml. A suite that serves some of the operator's webhooks must not
// register the others with the apiserver: their failurePolicy=Fail would make every request for
// those resources fail against a server that does not serve them.
func WebhookInstallOptions(names ...string) (envtest.WebhookInstallOptions, error) {
	var opts envtest.WebhookInstallOptions
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "config", "webhook", "manifests.yaml"))
	if err != nil {
		return opts, err
	}
	keep := make(map[string]bool, len(names))
	for _, n := range names {
		keep[n] = true
	}
	found := 0
	for doc := range bytes.SplitSeq(data, []byte("\n---")) {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return opts, err
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			var c admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return opts, err
			}
			var hooks []admissionregistrationv1.MutatingWebhook
			for _, w := range c.Webhooks {
				if keep[w.Name] {
					hooks = append(hooks, w)
				}
			}
			if len(hooks) > 0 {
				found += len(hooks)
				c.Webhooks = hooks
				opts.MutatingWebhooks = append(opts.MutatingWebhooks, &c)
			}
		case "ValidatingWebhookConfiguration":
			var c admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return opts, err
			}
			var hooks []admissionregistrationv1.ValidatingWebhook
			for _, w := range c.Webhooks {
				if keep[w.Name] {
					hooks = append(hooks, w)
				}
			}
			if len(hooks) > 0 {
				found += len(hooks)
				c.Webhooks = hooks
				opts.ValidatingWebhooks = append(opts.ValidatingWebhooks, &c)
			}
		}
	}
	if found != len(names) {
		return opts, fmt.Errorf("found %d of the webhooks %v in config/webhook/manifests.yaml", found, names)
	}
	return opts, nil
}
