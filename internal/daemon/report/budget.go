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

package report

import (
	"encoding/json"
	"slices"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// DefaultReportBudget is the most bytes the status of a node's report may take, JSON-encoded.
// The API server refuses an object over about 1.5 MiB (etcd's request limit), and then the node
// would lose every result; the rest is left to the object's metadata.
const DefaultReportBudget = 1 << 20

// ReasonReportOverBudget is the Warning event on the NodePodProbeReport, and on the first pod of
// each namespace concerned, when the daemon cuts namespaces' results to their Failed states to
// keep the report within its budget.
const ReasonReportOverBudget = "ReportOverBudget"

// fitBudget keeps st within budget bytes (its JSON encoding). Over it, each namespace gets a
// fair share of the budget: the largest share such that the report fits when every namespace
// whose results take more than it is cut to it (max-min fairness). A namespace within the share
// keeps every result, so no namespace, however many results it has, takes another's that are
// within theirs. A namespace over it is listed in OmittedNamespaces and keeps only its Failed
// states (those the decision restarts on), as many as fit its share in the report's order, and
// then one more each in turn while the rest of the budget holds one; its suspect, Unknown and
// NotProbed states and its pods listed notProbed are left out. failingProbes then counts the
// listed states only. It returns the encoded size.
func fitBudget(st *appsv1alpha1.ProbeResults, budget int) int {
	st.OmittedNamespaces = nil
	size := encodedSize(st)
	if size <= budget {
		return size
	}
	shares := namespaceShares(st.PodProbeStatuses)
	pods := st.PodProbeStatuses
	st.PodProbeStatuses = nil
	// What the report takes besides the namespaces' entries, the lists' keys included.
	base := encodedSize(st) + len(`,"podProbeStatuses":[]`) + len(`,"omittedNamespaces":[]`)
	total := func(share int) int {
		n := base
		for _, sh := range shares {
			b, _ := sh.use(share)
			n += b
		}
		return n
	}
	// total grows with the share: the largest share that fits (0 when even the namespaces'
	// names alone do not: then every namespace is listed and keeps nothing).
	lo, hi := 0, budget+1
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; total(mid) <= budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	keep := map[string]int{} // the Failed states each namespace over the share keeps
	for ns, sh := range shares {
		if _, n := sh.use(lo); n >= 0 {
			keep[ns] = n
			st.OmittedNamespaces = append(st.OmittedNamespaces, ns)
		}
	}
	slices.Sort(st.OmittedNamespaces)
	fillRest(st.OmittedNamespaces, shares, keep, budget-total(lo))
	st.PodProbeStatuses = cut(pods, keep, st)
	return encodedSize(st)
}

// fillRest gives what the shares leave of the budget (rest bytes) to the namespaces cut, one
// more Failed state each in turn: a share smaller than a state would otherwise keep none.
func fillRest(omitted []string, shares map[string]*nsShare, keep map[string]int, rest int) {
	for more := true; more; {
		more = false
		for _, ns := range omitted {
			sh, k := shares[ns], keep[ns]
			if k == len(sh.failed) {
				continue
			}
			if next := sh.failed[k] - lastOf(sh.failed[:k]); next <= rest {
				keep[ns], rest, more = k+1, rest-next, true
			}
		}
	}
}

// cut returns the pods' entries with each namespace of keep cut to its first keep[ns] Failed
// states; it sets st.FailingProbes to the Failed states it lists.
func cut(pods []appsv1alpha1.PodProbeStatus, keep map[string]int, st *appsv1alpha1.ProbeResults) []appsv1alpha1.PodProbeStatus {
	out := pods[:0]
	st.FailingProbes = 0
	for _, ps := range pods {
		if n, omitted := keep[ps.Namespace]; omitted {
			var failed []appsv1alpha1.ContainerProbeState
			for _, s := range ps.ProbeStates {
				if s.Failed() && len(failed) < n {
					failed = append(failed, s)
				}
			}
			if len(failed) == 0 {
				continue
			}
			keep[ps.Namespace] = n - len(failed)
			ps = appsv1alpha1.PodProbeStatus{Name: ps.Name, Namespace: ps.Namespace, UID: ps.UID, ProbeStates: failed}
		}
		st.FailingProbes += int32(ps.FailedProbes())
		out = append(out, ps)
	}
	return out
}

// nsShare is what one namespace's entries take in the report, in bytes (upper bounds: a comma
// is counted after every element).
type nsShare struct {
	name string
	full int
	// failed[i] is what its first i+1 Failed states take, in the report's order, each pod's
	// first one with the pod's own entry: what it keeps when it is cut.
	failed []int
}

// use returns the bytes the namespace takes with share bytes: all of its entries when they fit
// in it (and -1), otherwise its name in omittedNamespaces and the most of its Failed states that
// fit in the share beside it (and their number).
func (s *nsShare) use(share int) (int, int) {
	if s.full <= share {
		return s.full, -1
	}
	name := len(s.name) + len(`"",`)
	// The first prefix over what is left of the share.
	n, _ := slices.BinarySearch(s.failed, share-name+1)
	if n == 0 {
		return name, 0
	}
	return name + s.failed[n-1], n
}

// namespaceShares measures each namespace's entries, encoding each state once.
func namespaceShares(pods []appsv1alpha1.PodProbeStatus) map[string]*nsShare {
	shares := map[string]*nsShare{}
	for i := range pods {
		ps := &pods[i]
		sh := shares[ps.Namespace]
		if sh == nil {
			sh = &nsShare{name: ps.Namespace}
			shares[ps.Namespace] = sh
		}
		head := *ps
		head.ProbeStates = nil
		own := encodedSize(&head) + len(",")
		if len(ps.ProbeStates) > 0 {
			own += len(`,"probeStates":[]`)
		}
		sh.full += own
		first := true
		for j := range ps.ProbeStates {
			b := encodedSize(&ps.ProbeStates[j]) + len(",")
			sh.full += b
			if !ps.ProbeStates[j].Failed() {
				continue
			}
			if first {
				// A pod kept for its Failed states carries no notProbed: its entry is its names.
				b += own
				first = false
			}
			sh.failed = append(sh.failed, b+lastOf(sh.failed))
		}
	}
	return shares
}

func lastOf(s []int) int {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// encodedSize is the JSON size of v (0 if it does not encode, which these types always do).
func encodedSize(v any) int {
	data, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(data)
}
