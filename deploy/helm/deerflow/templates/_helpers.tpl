{{/* Names and labels shared by every template of the chart. */}}
{{- define "deerflow.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "deerflow.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "deerflow.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* A secret value: the one given, else the one already in the release's Secret, else a new random one. */}}
{{- define "deerflow.keep" -}}
{{- $given := index . 0 -}}{{- $existing := index . 1 -}}{{- $key := index . 2 -}}
{{- if $given -}}{{- $given -}}
{{- else if and $existing (hasKey $existing.data $key) -}}{{- index $existing.data $key | b64dec -}}
{{- else -}}{{- randAlphaNum 40 -}}
{{- end -}}
{{- end -}}

{{- define "deerflow.usesPostgres" -}}{{- if or .Values.postgresql.enabled .Values.externalDatabase.url -}}true{{- end -}}{{- end -}}
{{- define "deerflow.usesRedis" -}}{{- if or .Values.redis.enabled .Values.externalRedis.url -}}true{{- end -}}{{- end -}}

{{/* The gateway's config.yaml: the user's config, with database and stream_bridge set from the chart and the
     ingress hosts added to server.allowed_hosts (the gateway refuses Host headers it does not know). */}}
{{- define "deerflow.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- if include "deerflow.usesPostgres" . -}}
{{- $_ := set $config "database" (dict "backend" "postgres" "postgres_url" "$DATABASE_URL") -}}
{{- else -}}
{{- $_ := set $config "database" (dict "backend" "sqlite") -}}
{{- end -}}
{{- if include "deerflow.usesRedis" . -}}
{{- $_ := set $config "stream_bridge" (dict "type" "redis" "redis_url" "$DEER_FLOW_STREAM_BRIDGE_REDIS_URL") -}}
{{- end -}}
{{- if .Values.ingress.enabled -}}
{{- $server := deepCopy (default (dict) (index $config "server")) -}}
{{- $hosts := default (list) (index $server "allowed_hosts") -}}
{{- range .Values.ingress.hosts -}}{{- $hosts = append $hosts .host -}}{{- end -}}
{{- $_ := set $server "allowed_hosts" (uniq $hosts) -}}
{{- $_ := set $config "server" $server -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}
