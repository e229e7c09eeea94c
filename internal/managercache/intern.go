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

import "sync"

// maxInterned bounds the strings an interner remembers: past it the table starts over, which
// costs only sharing (later pods get copies of their own), never correctness.
const maxInterned = 1 << 16

// interner makes equal strings of cached pods share one copy. The decoder gives every pod its
// own copy of strings that are the same for every replica of a workload (label keys and values,
// the probe context, owner references, container and port names, the namespace and node); at
// 100,000 pods those copies are tens of MiB. Strings unique to one pod (name, UID, IPs,
// signatures) are not interned: they would only grow the table.
type interner struct {
	mu sync.Mutex
	m  map[string]string
}

func (in *interner) str(s string) string {
	if s == "" {
		return s
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if c, ok := in.m[s]; ok {
		return c
	}
	if in.m == nil || len(in.m) >= maxInterned {
		in.m = make(map[string]string, 1024)
	}
	in.m[s] = s
	return s
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
