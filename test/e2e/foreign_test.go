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

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemon/cri"
)

// A pods/status writer names another pod's container in an enrolled pod's status: the daemon
// asks CRI whose the container is and neither execs in it nor stops it.
var _ = Describe("a pod whose status names another pod's container", func() {
	It("is refused by the daemon (ForeignContainer); the other pod's container is never restarted", func() {
		ns := newNamespace("foreign")
		deployApp(ns, app{name: "intruder", replicas: 1, probe: execProbe(), enrolled: true})
		intruder := onlyPod(ns, "intruder")
		node := intruder.Spec.NodeName
		deployApp(ns, app{name: "victim", replicas: 1, node: node})
		victim := onlyPod(ns, "victim")
		victimID := containerStatus(&victim, appContainer).ContainerID
		Expect(victimID).NotTo(BeEmpty())
		Eventually(func() bool { return nppMentions(node, intruder.UID) }).WithTimeout(30 * time.Second).Should(BeTrue())

		By("the intruder's exec probe fails, and its status names the victim's container")
		setSick(intruder, true)
		// The kubelet writes the pod's own container back within seconds: the patch is repeated
		// every second until a probe run or a stop has met it.
		patch := fmt.Sprintf(`[{"op":"replace","path":"/status/containerStatuses/0/containerID","value":%q}]`, victimID)
		Eventually(func(g Gomega) {
			p := getPod(ns, intruder.Name)
			g.Expect(k8s.Status().Patch(context.Background(), p, client.RawPatch(types.JSONPatchType, []byte(patch)))).To(Succeed())
			g.Expect(hasEvent(ns, intruder.Name, cri.ReasonForeignContainer, daemonReporter, "belongs to another pod")()).To(BeTrue())
		}).WithTimeout(90*time.Second).WithPolling(time.Second).Should(Succeed(), "a ForeignContainer event on the intruder")

		By("the victim's container is the same instance, never restarted")
		Consistently(func(g Gomega) {
			s := containerStatus(getPod(ns, victim.Name), appContainer)
			g.Expect(s.RestartCount).To(BeZero())
			g.Expect(s.ContainerID).To(Equal(victimID))
		}).WithTimeout(10 * time.Second).WithPolling(time.Second).Should(Succeed())
		for _, e := range eventsAbout(ns, victim.Name) {
			Expect(e.Reason).NotTo(Equal("Killing"), "the victim was stopped: %s", e.Note)
		}
		Expect(crrsOfPod(ns, string(victim.UID))).To(BeEmpty())
	})
})
