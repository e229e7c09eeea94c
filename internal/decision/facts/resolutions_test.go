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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

func TestResolutions(t *testing.T) {
	rsA := OwnerKey{Namespace: "shop", APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-a"}
	rsB := OwnerKey{Namespace: "shop", APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-2", UID: "rs-b"}
	rsOther := OwnerKey{Namespace: "other", APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-c"}
	web := rules.WorkloadKey{Namespace: "shop", Group: "apps", Kind: "Deployment", Name: "web"}
	webOther := rules.WorkloadKey{Namespace: "other", Group: "apps", Kind: "Deployment", Name: "web"}

	type step struct {
		what       string
		invalidate string // namespace to invalidate before the step, if any
		lookup     OwnerKey
		wantHit    bool
		// remember, with the generation Lookup returned, after invalidating invalidateAfter.
		remember        *rules.WorkloadKey
		invalidateAfter string
	}
	steps := []step{
		{what: "empty memo", lookup: rsA, remember: &web},
		{what: "remembered", lookup: rsA, wantHit: true},
		{what: "another reference of the same namespace is not", lookup: rsB},
		{what: "another namespace", lookup: rsOther, remember: &webOther},
		{what: "an owner created, deleted or re-parented in shop", invalidate: "shop", lookup: rsA},
		{what: "other namespaces keep theirs", lookup: rsOther, wantHit: true},
		{what: "an answer read before an invalidation is dropped", lookup: rsA, remember: &web, invalidateAfter: "shop"},
		{what: "so rsA is resolved again", lookup: rsA, remember: &web},
		{what: "and kept when nothing changed meanwhile", lookup: rsA, wantHit: true},
		{what: "an invalidation elsewhere does not drop it", lookup: rsB, remember: &web, invalidateAfter: "other"},
		{what: "rsB kept", lookup: rsB, wantHit: true},
		{what: "other was forgotten", lookup: rsOther},
	}
	r := newResolutions()
	for _, s := range steps {
		if s.invalidate != "" {
			r.invalidate(s.invalidate)
		}
		got, gen, ok := r.lookup(s.lookup)
		if ok != s.wantHit {
			t.Fatalf("%s: lookup(%s) hit = %v, want %v", s.what, s.lookup.Name, ok, s.wantHit)
		}
		if ok && got != web && got != webOther {
			t.Fatalf("%s: lookup(%s) = %v", s.what, s.lookup.Name, got)
		}
		if s.remember != nil {
			if s.invalidateAfter != "" {
				r.invalidate(s.invalidateAfter)
			}
			r.remember(gen, s.lookup, *s.remember)
		}
	}
}

func TestControllerChanged(t *testing.T) {
	ctrl := func(kind, name string, uid types.UID) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
	}
	obj := func(uid types.UID, refs ...metav1.OwnerReference) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Name: "web-1", UID: uid, OwnerReferences: refs}
	}
	web := ctrl("Deployment", "web", "d1")
	notController := web
	notController.Controller = nil
	cases := []struct {
		what     string
		old, new *metav1.ObjectMeta
		want     bool
	}{
		{"no controller either time", obj("rs"), obj("rs"), false},
		{"same controller (a status or spec update)", obj("rs", web), obj("rs", web), false},
		{"adopted", obj("rs"), obj("rs", web), true},
		{"orphaned", obj("rs", web), obj("rs"), true},
		{"orphaned, a plain owner reference left", obj("rs", web), obj("rs", notController), true},
		{"adopted by a Deployment recreated under the same name", obj("rs", web), obj("rs", ctrl("Deployment", "web", "d2")), true},
		{"adopted by another workload", obj("rs", web), obj("rs", ctrl("Deployment", "api", "d1")), true},
		{"another kind", obj("rs", web), obj("rs", ctrl("StatefulSet", "web", "d1")), true},
		{"another object (a tombstone's last state)", obj("rs", web), obj("rs2", web), true},
	}
	for _, c := range cases {
		if got := ControllerChanged(c.old, c.new); got != c.want {
			t.Errorf("%s: ControllerChanged = %v, want %v", c.what, got, c.want)
		}
	}
}
