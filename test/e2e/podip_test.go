//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/prober"
)

// A pods/status writer points an enrolled pod's status.podIP at another pod: the daemon dials the
// address the runtime gives the pod's sandbox, and says the status disagrees.
var _ = Describe("a pod whose status.podIP names another pod", func() {
	It("is probed at its sandbox's address (PodIPMismatch), and restarted when it hangs; the other pod is not", func() {
		ns := newNamespace("podip")
		deployApp(ns, app{name: "intruder", replicas: 1, probe: httpProbe(), enrolled: true})
		intruder := onlyPod(ns, "intruder")
		deployApp(ns, app{name: "victim", replicas: 1, node: intruder.Spec.NodeName})
		victim := onlyPod(ns, "victim")
		Eventually(func() bool { return nppMentions(intruder.Spec.NodeName, intruder.UID) }).WithTimeout(30 * time.Second).Should(BeTrue())

		By("the intruder's status.podIP names the victim's address")
		patch := fmt.Sprintf(`[{"op":"replace","path":"/status/podIP","value":%q},{"op":"replace","path":"/status/podIPs","value":[{"ip":%q}]}]`,
			victim.Status.PodIP, victim.Status.PodIP)
		Eventually(func(g Gomega) {
			p := getPod(ns, intruder.Name)
			g.Expect(k8s.Status().Patch(context.Background(), p, client.RawPatch(types.JSONPatchType, []byte(patch)))).To(Succeed())
			g.Expect(hasEvent(ns, intruder.Name, prober.ReasonPodIPMismatch, daemonReporter, victim.Status.PodIP)()).To(BeTrue())
		}).WithTimeout(60*time.Second).WithPolling(time.Second).Should(Succeed(), "a PodIPMismatch event on the intruder")

		By("the intruder hangs: its own address fails and it is restarted; the victim is untouched")
		setSick(intruder, true)
		Eventually(restartCount(ns, intruder.Name)).WithTimeout(60 * time.Second).Should(BeNumerically(">=", 1))
		Expect(restartCount(ns, victim.Name)()).To(BeZero())
	})
})
