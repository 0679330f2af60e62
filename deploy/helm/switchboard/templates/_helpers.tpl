{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name, with the chart name unless the release already contains it. */}}
{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "switchboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "switchboard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "switchboard.labels" -}}
helm.sh/chart: {{ include "switchboard.chart" . }}
{{ include "switchboard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "switchboard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "switchboard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "switchboard.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The configuration file both the Deployment and the migration Job mount. */}}
{{- define "switchboard.configYaml" -}}
{{- toYaml .Values.config }}
{{- end }}

{{/*
Environment shared by the gateway and the migration Job: the Secret's keys (os.environ/NAME targets of
the configuration), the data folder, and extra variables.
*/}}
{{- define "switchboard.env" -}}
- name: GATEWAY_CONFIG
  value: /etc/switchboard/config.yaml
- name: GATEWAY_DATA_DIR
  value: /var/lib/switchboard
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- range $name, $key := .Values.secret.env }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $.Values.secret.name }}
      key: {{ $key }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "switchboard.envFrom" -}}
{{- range .Values.secret.envFromSecrets }}
- secretRef:
    name: {{ . }}
{{- end }}
{{- end }}

{{/*
The pod must outlive its drain: the preStop sleep, then the gateway's pre-stop wait, its grace period
for in-flight requests and the one second before it closes what is left. A shorter
terminationGracePeriodSeconds would SIGKILL pods mid-drain, so the chart refuses it.
*/}}
{{- define "switchboard.checkDrain" -}}
{{- $general := default dict .Values.config.general_settings }}
{{- $preStop := int .Values.drain.preStopSleepSeconds }}
{{- $gatewayPreStop := int (default 0 (get $general "shutdown_pre_stop_seconds")) }}
{{- $grace := int (default 30 (get $general "shutdown_grace_seconds")) }}
{{- $needed := add $preStop $gatewayPreStop $grace 1 }}
{{- if le (int .Values.terminationGracePeriodSeconds) $needed }}
{{- fail (printf "terminationGracePeriodSeconds (%d) must be above drain.preStopSleepSeconds + shutdown_pre_stop_seconds + shutdown_grace_seconds + 1 = %d" (int .Values.terminationGracePeriodSeconds) $needed) }}
{{- end }}
{{- end }}
