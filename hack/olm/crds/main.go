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

// Command crds prints OLM's CustomResourceDefinitions (operators.coreos.com) as a YAML stream,
// from the operator-framework/api module this project already requires, for
// `kubectl apply --server-side -f -` in hack/olm/install.sh (OLM's own installer downloads
// release manifests, which cannot be reached here).
package main

import (
	"fmt"
	"os"

	"github.com/operator-framework/api/crds"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	all := []*apiextensionsv1.CustomResourceDefinition{
		crds.CatalogSource(), crds.ClusterServiceVersion(), crds.InstallPlan(), crds.OLMConfig(),
		crds.Operator(), crds.OperatorCondition(), crds.OperatorGroup(), crds.Subscription(),
	}
	for _, c := range all {
		c.APIVersion, c.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
		b, err := yaml.Marshal(c)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crds:", c.Name, err)
			os.Exit(1)
		}
		fmt.Printf("---\n%s", b)
	}
}
