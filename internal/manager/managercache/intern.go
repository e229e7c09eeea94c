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

package managercache

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// maxInterned bounds the strings an interner remembers: past it the table starts over, which
// costs only sharing (later pods get copies of their own), never correctness.
const maxInterned = 1 << 16

// interner makes equal strings of cached pods share one copy. The decoder gives every pod its
// own copy of strings that are the same for every replica of a workload (label keys and values,
// the probe context, owner references, container and port names, the namespace and node); at
// 100,000 pods those copies are tens of MiB. Strings unique to one pod (name, UID, IPs,
// signatures) are not interned: they would only grow the table.
type interner struct{ t shared[string] }

func (in *interner) str(s string) string {
	if s == "" {
		return s
	}
	return in.t.get(s, func() string { return s })
}

// strMap returns a right-sized copy of m with interned keys, and values interned where value says.
func (in *interner) strMap(m map[string]string, value func(key string) bool) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if value(k) {
			v = in.str(v)
		}
		out[in.str(k)] = v
	}
	return out
}

// shared hands out one copy of equal values of cached pods (strings, and what replicas share
// whole: label maps, owner references, stripped containers), keyed by a canonical encoding; bounded and started over
// like the strings. Cached objects are only read, so sharing a map or a slice among them is safe;
// a reader that wants to change one gets a deep copy from the cache, as for any cached object.
type shared[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func (s *shared[T]) get(key string, build func() T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[key]; ok {
		return v
	}
	if s.m == nil || len(s.m) >= maxInterned {
		s.m = make(map[string]T, 1024)
	}
	v := build()
	s.m[key] = v
	return v
}

var (
	labelMaps      shared[map[string]string]
	ownerLists     shared[[]metav1.OwnerReference]
	containerLists shared[[]corev1.Container]
)

// sharedLabels returns the pod's labels as one map shared by every pod with the same labels, or,
// when a label names the pod itself (sharedLabel), a copy of its own with interned strings.
func sharedLabels(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if !sharedLabel(k) {
			return strs.strMap(m, sharedLabel)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	return labelMaps.get(b.String(), func() map[string]string {
		return strs.strMap(m, func(string) bool { return true })
	})
}

// sharedOwners returns the pod's owner references as one slice shared by every pod with the same
// ones (the replicas of a ReplicaSet).
func sharedOwners(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if refs == nil {
		return nil
	}
	var b strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%v\x00%v\x00", r.APIVersion, r.Kind, r.Name, r.UID,
			ptrString(r.Controller), ptrString(r.BlockOwnerDeletion))
	}
	return ownerLists.get(b.String(), func() []metav1.OwnerReference {
		out := make([]metav1.OwnerReference, len(refs))
		for i, r := range refs {
			r.APIVersion, r.Kind, r.Name = strs.str(r.APIVersion), strs.str(r.Kind), strs.str(r.Name)
			r.UID = types.UID(strs.str(string(r.UID)))
			out[i] = r
		}
		return out
	})
}

func ptrString(b *bool) string {
	if b == nil {
		return "nil"
	}
	return strconv.FormatBool(*b)
}
