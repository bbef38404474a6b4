{{/*
Every template ranges over the components with "hcpsched.components" and passes a
context dict to the helpers below: root (the chart's top-level context), name (the
component) and c (the component's values).
*/}}

{{/* hcpsched.components lists the enabled components, one per line. */}}
{{- define "hcpsched.components" -}}
{{- range $name := list "backend" "fleet" }}
{{- if (index $.Values $name).enabled }}
{{ $name }}
{{- end }}
{{- end }}
{{- end }}

{{- define "hcpsched.fullname" -}}
{{- printf "%s-%s" .root.Release.Name .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "hcpsched.serviceAccountName" -}}
{{- default (include "hcpsched.fullname" .) .c.serviceAccount.name }}
{{- end }}

{{- define "hcpsched.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .name }}
{{- end }}

{{- define "hcpsched.labels" -}}
{{ include "hcpsched.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
hcpsched.env renders the component's flags as HCPSCHED_<FLAG> variables: the shared
config, then the component's, then the listen addresses derived from the ports so that
the probes and the Service always point at the servers. Empty values are left out so
the binary's default applies.
*/}}
{{- define "hcpsched.env" -}}
{{- $config := merge (dict) .c.config .root.Values.config }}
{{- $_ := set $config "metrics-address" (printf ":%v" .root.Values.metricsPort) }}
{{- $_ = set $config "health-address" (printf ":%v" .root.Values.healthPort) }}
{{- range $flag := keys $config | sortAlpha }}
{{- $value := index $config $flag | toString }}
{{- if $value }}
{{ printf "HCPSCHED_%s" ($flag | upper | replace "-" "_") }}: {{ $value | quote }}
{{- end }}
{{- end }}
{{- end }}

{{- define "hcpsched.image" -}}
{{- $repo := .c.image.repository }}
{{- with .root.Values.image.registry }}
{{- $repo = printf "%s/%s" . $repo }}
{{- end }}
{{- if .root.Values.image.digest }}
{{- printf "%s@%s" $repo .root.Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repo (default .root.Chart.AppVersion .root.Values.image.tag) }}
{{- end }}
{{- end }}
