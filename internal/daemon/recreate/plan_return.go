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

package recreate

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// returnWait is how long the plan's status write may wait (0: none): when all it records is
// the return of stops that went through, each returned less than ReturnWindow ago. The kubelet
// starts the new container within about a second of the exit; written with it, the return costs
// no write of its own. Until then the status still shows the stop in flight, which only matters
// past the deadline, and from the deadline on nothing waits (Advance leaves the request then).
func (o Observation) returnWait(p Plan) time.Duration {
	if o.ReturnWindow <= 0 || len(p.Kill) > 0 || p.Phase != appsv1alpha1.RecreateRecreating {
		return 0
	}
	read := make(map[string]appsv1alpha1.ContainerRecreateState, len(o.States))
	for _, s := range o.States {
		read[s.Name] = s
	}
	var wait time.Duration
	for _, st := range p.States {
		was, ok := read[st.Name]
		switch {
		case !ok:
			return 0
		case equality.Semantic.DeepEqual(was, st):
			continue
		case !was.StopInFlight || st.StopInFlight || was.Phase != appsv1alpha1.RecreateRecreating ||
			st.Phase != appsv1alpha1.RecreateRecreating || was.ContainerID != st.ContainerID:
			return 0
		}
		m := o.Stops[st.ContainerID]
		if m.result == nil || m.result.outcome != stopped {
			return 0
		}
		// Apart from what the return records, the state is as read.
		was.StopInFlight, was.IsKilled, was.Message = st.StopInFlight, st.IsKilled, st.Message
		if !equality.Semantic.DeepEqual(was, st) {
			return 0
		}
		left := o.ReturnWindow - o.Now.Sub(m.result.at)
		if left <= 0 {
			return 0
		}
		if wait == 0 || left < wait {
			wait = left
		}
	}
	return wait
}
