{{/*
Helpers of the generated templates (templates/generated/, written by hack/chart from
config/default): the labels of every object, the image, and the manager's arguments and
resources from the values.
*/}}

{{/* Labels of every object, besides those config/default gives it. */}}
{{- define "elo.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/*
The operator image: repository:tag@digest when both are set (the digest pins it, the tag is for
reading), repository@digest, else repository:tag (default v<appVersion>).
*/}}
{{- define "elo.image" -}}
{{- if and .Values.image.digest .Values.image.tag -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}@{{ .Values.image.digest }}
{{- else if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default (printf "v%s" .Chart.AppVersion) }}
{{- end -}}
{{- end }}

{{/*
A flag as one argument, --name=value. Numbers are printed as integers when they are (values
arrive as floats, which would print 1000000 as 1e+06).
*/}}
{{- define "elo.flag" -}}
{{- $v := .value -}}
{{- if and (kindIs "float64" $v) (eq (float64 (int64 $v)) $v) }}{{ $v = int64 $v }}{{ end -}}
{{ printf "%s--%s=%v" .prefix .name $v | quote }}
{{- end }}

{{/* A resource list as --daemon-requests and --daemon-limits take it: cpu=20m,memory=64Mi. */}}
{{- define "elo.resourceList" -}}
{{- $items := list -}}
{{- range $name, $q := . -}}
{{- if and (kindIs "float64" $q) (eq (float64 (int64 $q)) $q) }}{{ $q = int64 $q }}{{ end -}}
{{- $items = append $items (printf "%s=%v" $name $q) -}}
{{- end -}}
{{ join "," $items }}
{{- end }}

{{/*
The manager's arguments: manager.flags (sorted by name; null leaves a flag out), then every
daemon.flags entry as --daemon-arg=--name=value, then daemon.resources as --daemon-requests and
--daemon-limits.
*/}}
{{- define "elo.managerArgs" -}}
{{- range $name, $value := .Values.manager.flags }}
{{- if not (kindIs "invalid" $value) }}
- {{ include "elo.flag" (dict "prefix" "" "name" $name "value" $value) }}
{{- end }}
{{- end }}
{{- range $name, $value := .Values.daemon.flags }}
{{- if not (kindIs "invalid" $value) }}
- {{ include "elo.flag" (dict "prefix" "--daemon-arg=" "name" $name "value" $value) }}
{{- end }}
{{- end }}
{{- with .Values.daemon.resources }}
{{- if hasKey . "requests" }}
- {{ printf "--daemon-requests=%s" (include "elo.resourceList" .requests) | quote }}
{{- end }}
{{- if hasKey . "limits" }}
- {{ printf "--daemon-limits=%s" (include "elo.resourceList" .limits) | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* The manager's resources: manager.resources when set, else the preset of manager.size. */}}
{{- define "elo.managerResources" -}}
{{- if .Values.manager.resources -}}
{{ toYaml .Values.manager.resources }}
{{- else -}}
{{- $preset := index .Values.manager.sizes .Values.manager.size -}}
{{- if not $preset -}}
{{- fail (printf "manager.size: %q has no entry in manager.sizes" .Values.manager.size) -}}
{{- end -}}
{{ toYaml $preset }}
{{- end -}}
{{- end }}
