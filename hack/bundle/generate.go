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
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Options are the inputs of one bundle besides the manifests.
type Options struct {
	Package        string
	Version        string
	Channels       []string
	DefaultChannel string
	ManagerImage   string
	DaemonImage    string
	CreatedAt      string
	// Replaces names the CSV this one upgrades from (optional).
	Replaces string
}

func (o Options) validate() error {
	var errs []string
	if o.Package == "" {
		errs = append(errs, "package name is empty")
	}
	if _, err := semver.Parse(o.Version); err != nil {
		errs = append(errs, fmt.Sprintf("version %q is not semver: %v", o.Version, err))
	}
	if len(o.Channels) == 0 {
		errs = append(errs, "no channel")
	}
	if o.DefaultChannel != "" && !contains(o.Channels, o.DefaultChannel) {
		errs = append(errs, fmt.Sprintf("default channel %q is not among the channels %v", o.DefaultChannel, o.Channels))
	}
	if o.ManagerImage == "" || o.DaemonImage == "" {
		errs = append(errs, "manager and daemon images are required")
	}
	if o.CreatedAt == "" {
		errs = append(errs, "createdAt is empty (it is fixed so that the bundle is reproducible)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("bundle options: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Bundle is everything `make bundle` writes, before serialization.
type Bundle struct {
	CSV *operatorsv1alpha1.ClusterServiceVersion
	// Manifests are the other objects of bundle/manifests (CRDs first), namespaces stripped.
	Manifests []*unstructured.Unstructured
	// Scorecard is the scorecard Configuration (bundle/tests/scorecard/config.yaml), if any.
	Scorecard *unstructured.Unstructured
	// Annotations are bundle/metadata/annotations.yaml and the bundle.Dockerfile labels.
	Annotations map[string]string
	// Dropped lists objects that have no place in a bundle, as "Kind/name: why".
	Dropped []string
}

// Generate turns the rendered config/manifests into a bundle.
func Generate(objs []*unstructured.Unstructured, o Options) (*Bundle, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	in, err := classify(objs)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Scorecard: in.scorecard, Annotations: annotations(o)}

	csv := in.baseCSV.DeepCopy()
	csv.Name = o.Package + ".v" + o.Version
	csv.Namespace = ""
	csv.Spec.Version = version.OperatorVersion{Version: semver.MustParse(o.Version)}
	csv.Spec.Replaces = o.Replaces
	csv.Spec.RelatedImages = []operatorsv1alpha1.RelatedImage{
		{Name: "manager", Image: o.ManagerImage},
		{Name: "daemon", Image: o.DaemonImage},
	}
	if csv.Annotations == nil {
		csv.Annotations = map[string]string{}
	}
	csv.Annotations["containerImage"] = o.ManagerImage
	csv.Annotations["createdAt"] = o.CreatedAt
	examples, err := almExamples(in.samples)
	if err != nil {
		return nil, err
	}
	csv.Annotations["alm-examples"] = examples

	owned := &csv.Spec.CustomResourceDefinitions.Owned
	if *owned, err = ownedCRDs(*owned, in.crds); err != nil {
		return nil, err
	}
	for _, crd := range in.crds {
		u, err := toUnstructured(crd)
		if err != nil {
			return nil, err
		}
		b.Manifests = append(b.Manifests, u)
	}

	inst, err := installStrategy(in, o)
	if err != nil {
		return nil, err
	}
	csv.Spec.InstallStrategy = operatorsv1alpha1.NamedInstallStrategy{
		StrategyName: operatorsv1alpha1.InstallStrategyNameDeployment,
		StrategySpec: inst.strategy,
	}
	csv.Spec.WebhookDefinitions = inst.webhooks
	b.Manifests = append(b.Manifests, inst.extra...)
	b.Dropped = append(in.dropped, inst.dropped...)
	slices.Sort(b.Dropped)
	b.CSV = csv
	return b, nil
}

// annotations are the bundle metadata; bundle.Dockerfile repeats them as labels.
func annotations(o Options) map[string]string {
	a := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   o.Package,
		"operators.operatorframework.io.bundle.channels.v1":  strings.Join(o.Channels, ","),
		"operators.operatorframework.io.test.mediatype.v1":   "scorecard+v1",
		"operators.operatorframework.io.test.config.v1":      "tests/scorecard/",
	}
	if o.DefaultChannel != "" {
		a["operators.operatorframework.io.bundle.channel.default.v1"] = o.DefaultChannel
	}
	return a
}

// inputs are the rendered objects sorted by their role in the bundle.
type inputs struct {
	baseCSV     *operatorsv1alpha1.ClusterServiceVersion
	crds        []*apiextensionsv1.CustomResourceDefinition
	samples     []*unstructured.Unstructured
	deployments []*appsv1.Deployment
	scorecard   *unstructured.Unstructured
	// others are every remaining object, looked at by installStrategy.
	others  []*unstructured.Unstructured
	dropped []string
}

func classify(objs []*unstructured.Unstructured) (*inputs, error) {
	in := &inputs{}
	crdGroups := map[string]bool{}
	for _, u := range objs {
		if u.GetKind() == kindCRD {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := fromUnstructured(u, crd); err != nil {
				return nil, err
			}
			in.crds = append(in.crds, crd)
			crdGroups[crd.Spec.Group] = true
		}
	}
	slices.SortFunc(in.crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return cmp.Compare(a.Name, b.Name)
	})

	for _, u := range objs {
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Kind == kindCRD:
		case gvk.Kind == kindCSV:
			if in.baseCSV != nil {
				return nil, fmt.Errorf("more than one ClusterServiceVersion in the input")
			}
			in.baseCSV = &operatorsv1alpha1.ClusterServiceVersion{}
			if err := fromUnstructured(u, in.baseCSV); err != nil {
				return nil, err
			}
		case crdGroups[gvk.Group]:
			in.samples = append(in.samples, u)
		case gvk.Group == "scorecard.operatorframework.io" && gvk.Kind == "Configuration":
			in.scorecard = u
		case gvk.Group == "apps" && gvk.Kind == "Deployment":
			d := &appsv1.Deployment{}
			if err := fromUnstructured(u, d); err != nil {
				return nil, err
			}
			in.deployments = append(in.deployments, d)
		case gvk.Kind == "Namespace":
			in.dropped = append(in.dropped, "Namespace/"+u.GetName()+": OLM installs into the namespace of the OperatorGroup")
		default:
			in.others = append(in.others, u)
		}
	}
	if in.baseCSV == nil {
		return nil, fmt.Errorf("no base ClusterServiceVersion in the input (config/manifests/bases)")
	}
	if len(in.deployments) != 1 {
		return nil, fmt.Errorf("want exactly one Deployment (the manager), found %d", len(in.deployments))
	}
	return in, nil
}

// ownedCRDs completes the base CSV's owned CRD descriptions (display names, descriptors) with
// the served storage version and kind of every CRD, and fails on a CRD the base does not
// describe: its description and descriptors are meant to be written by a person.
func ownedCRDs(base []operatorsv1alpha1.CRDDescription, crds []*apiextensionsv1.CustomResourceDefinition,
) ([]operatorsv1alpha1.CRDDescription, error) {
	byName := map[string]operatorsv1alpha1.CRDDescription{}
	for _, d := range base {
		byName[d.Name] = d
	}
	var out []operatorsv1alpha1.CRDDescription
	for _, crd := range crds {
		d, ok := byName[crd.Name]
		if !ok {
			return nil, fmt.Errorf("CRD %s has no owned entry in the base CSV (config/manifests/bases): "+
				"add its displayName, description and descriptors", crd.Name)
		}
		delete(byName, crd.Name)
		d.Kind = crd.Spec.Names.Kind
		d.Version = storageVersion(crd)
		if d.DisplayName == "" {
			d.DisplayName = d.Kind
		}
		out = append(out, d)
	}
	for name := range byName {
		return nil, fmt.Errorf("base CSV describes CRD %s which config/crd does not contain", name)
	}
	slices.SortFunc(out, func(a, b operatorsv1alpha1.CRDDescription) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return crd.Spec.Versions[0].Name
}

// almExamples renders the samples as the CSV's alm-examples JSON, sorted for reproducibility.
func almExamples(samples []*unstructured.Unstructured) (string, error) {
	sorted := append([]*unstructured.Unstructured(nil), samples...)
	slices.SortStableFunc(sorted, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetAPIVersion(), b.GetAPIVersion()), cmp.Compare(a.GetKind(), b.GetKind()),
			cmp.Compare(a.GetName(), b.GetName()))
	})
	list := make([]map[string]any, 0, len(sorted))
	for _, s := range sorted {
		list = append(list, s.Object)
	}
	out, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return "", err
	}
	return string(out), nil
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func contains(s []string, v string) bool { return slices.Contains(s, v) }
