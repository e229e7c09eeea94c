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
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

// webhookInstallOptions returns envtest options that install only the named webhooks of
// config/webhook/manifests.yaml. A suite that serves some of the operator's webhooks must not
// register the others with the apiserver: their failurePolicy=Fail would make every request for
// those resources fail against a server that does not serve them.
func webhookInstallOptions(names ...string) (envtest.WebhookInstallOptions, error) {
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
		// The mutating and the validating configurations differ only in the type of their
		// webhooks: both are filtered by name as they are read, then typed.
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return opts, err
		}
		hooks, _ := obj["webhooks"].([]any)
		var kept []any
		for _, w := range hooks {
			if m, ok := w.(map[string]any); ok && keep[fmt.Sprint(m["name"])] {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			continue
		}
		obj["webhooks"] = kept
		var typed any
		switch obj["kind"] {
		case "MutatingWebhookConfiguration":
			c := &admissionregistrationv1.MutatingWebhookConfiguration{}
			opts.MutatingWebhooks, typed = append(opts.MutatingWebhooks, c), c
		case "ValidatingWebhookConfiguration":
			c := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			opts.ValidatingWebhooks, typed = append(opts.ValidatingWebhooks, c), c
		default:
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, typed); err != nil {
			return opts, err
		}
		found += len(kept)
	}
	if found != len(names) {
		return opts, fmt.Errorf("found %d of the webhooks %v in config/webhook/manifests.yaml", found, names)
	}
	return opts, nil
}
