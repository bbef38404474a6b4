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
{{ include "hcpsched.versionLabels" .root }}
{{- end }}

{{/* hcpsched.releaseLabels labels the objects of the whole release, not of one component; takes the root context. */}}
{{- define "hcpsched.releaseLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{ include "hcpsched.versionLabels" . }}
{{- end }}

{{- define "hcpsched.versionLabels" -}}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
hcpsched.chartSetFlags are the flags the chart sets on every component itself, each with
what sets it: a config key for one would be rendered beside the chart's own value, and
whichever the binary read would silently win.
*/}}
{{- define "hcpsched.chartSetFlags" -}}
metrics-address: set metricsPort instead
health-address: set healthPort instead
leader-election-namespace: the Lease lives in the pod's namespace
leader-election-identity: each replica's identity is its pod's name
{{- end }}

{{/* hcpsched.validate fails the render on values the schema cannot refuse; takes the root context. */}}
{{- define "hcpsched.validate" -}}
{{- /* The binaries can share one server for both, but a pod cannot declare one port twice. */}}
{{- if eq (int .Values.metricsPort) (int .Values.healthPort) }}
{{- fail "metricsPort and healthPort must differ" }}
{{- end }}
{{- $chartSet := include "hcpsched.chartSetFlags" . | fromYaml }}
{{- $configs := list (list "config" .Values.config) }}
{{- range $name := list "backend" "fleet" }}
{{- $configs = append $configs (list (printf "%s.config" $name) (index $.Values $name).config) }}
{{- end }}
{{- range $pair := $configs }}
{{- range $flag := keys (last $pair) | sortAlpha }}
{{- if hasKey $chartSet $flag }}
{{- fail (printf "%s.%s: the chart sets --%s itself: %s" (first $pair) $flag $flag (index $chartSet $flag)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
hcpsched.topologySpreadConstraints renders the component's constraints, each without a
labelSelector given the component's selector labels, so that the default (and a
user's constraint) spreads this component's replicas only.
*/}}
{{- define "hcpsched.topologySpreadConstraints" -}}
{{- $out := list }}
{{- range $tsc := get .c "topologySpreadConstraints" | default list }}
{{- $tsc = deepCopy $tsc }}
{{- if not (get $tsc "labelSelector") }}
{{- $_ := set $tsc "labelSelector" (dict "matchLabels" (include "hcpsched.selectorLabels" $ | fromYaml)) }}
{{- end }}
{{- $out = append $out $tsc }}
{{- end }}
{{- with $out }}
{{- toYaml . }}
{{- end }}
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
