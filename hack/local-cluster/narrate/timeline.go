package main

import (
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
)

func eventTime(e eventsv1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.DeprecatedLastTimestamp.IsZero() {
		return e.DeprecatedLastTimestamp.Time
	}
	return e.EventTime.Time
}

// kubeletComponent is the reporting component of the kubelet's own events.
const kubeletComponent = "kubelet"

// describe turns an event into a timeline line; "" for the noise a reader does not need.
func describe(e eventsv1.Event) string {
	who := e.ReportingController
	if who == "" {
		who = e.DeprecatedSource.Component
	}
	note := strings.TrimSpace(e.Note)
	switch {
	case e.Reason == "Unhealthy" && who == kubeletComponent:
		return "kubelet liveness probe failed (native path): " + note
	case e.Reason == "Unhealthy":
		return "liveness probe failed, seen by the node daemon: " + note
	case e.Reason == "RestartRequested":
		return "restart decided by the operator: " + note
	case e.Reason == "RestartHeld":
		return "restart HELD: " + note
	case e.Reason == "Killing" && who == kubeletComponent:
		return "container killed by the kubelet: " + note
	case e.Reason == "Killing":
		return "container stopped by the node daemon: " + note
	case e.Reason == "Started" && who == kubeletComponent:
		return "container started"
	// A ContainerRecreateRequest's own events repeat its phase, which the timeline already shows.
	case e.Regarding.Kind == "EnhancedLivenessPolicy":
		return e.Reason + ": " + note
	}
	return ""
}
