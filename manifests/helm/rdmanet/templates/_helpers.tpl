{{/* Names, labels and the checks values.schema.json cannot express (they relate two keys). */}}

{{- define "rdmanet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "rdmanet.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "rdmanet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rdmanet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "rdmanet.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "rdmanet.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: rdmanet
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "rdmanet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "rdmanet.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "rdmanet.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* A pool's DeviceClass (api: dra): <resourceName, lower case, '_' as '-'>.<driver>. */}}
{{- define "rdmanet.deviceClassName" -}}
{{- printf "%s.%s" (.pool | lower | replace "_" "-") .driver -}}
{{- end -}}

{{/* The device plugin's config file: the sriov-network-device-plugin format. */}}
{{- define "rdmanet.deviceConfig" -}}
{{- $pools := list -}}
{{- range $p := .Values.pools -}}
{{- $p = deepCopy $p -}}
{{- if and $.Values.cni.podInfoDir (eq (default "vf" $p.mode) "vf") -}}
{{- $_ := set $p "podInfoDir" $.Values.cni.podInfoDir -}}
{{- end -}}
{{- $pools = append $pools $p -}}
{{- end -}}
{{- $cfg := dict "resourcePrefix" .Values.devicePlugin.resourcePrefix "resourceList" $pools -}}
{{- $lldp := default dict .Values.devicePlugin.lldp -}}
{{- if $lldp.rails -}}
{{- $_ := set $cfg "rails" $lldp.rails -}}
{{- end -}}
{{- $cfg | toPrettyJson -}}
{{- end -}}

{{/*
rdmanet.netconf: the CNI netconf of one `networks` entry. The schema admits only netconf keys
besides the chart's own (namespace, labels, annotations, pool), so the rest passes through as is.
*/}}
{{- define "rdmanet.netconf" -}}
{{- $conf := omit . "namespace" "labels" "annotations" "pool" -}}
{{- $_ := set $conf "cniVersion" (default "1.0.0" .cniVersion) -}}
{{- $_ := set $conf "type" "rdmanet" -}}
{{- /* Multus passes runtimeConfig only for the capabilities a netconf declares. rdmanet needs one:
CNIDeviceInfoFile, the device-info file's path (rdmanet writes its own, which Multus prefers). Not
deviceID: Multus writes the device kubelet allocated into the netconf's own deviceID and pciBusID,
and the capability would only add the device a pod names in its annotation, which rdmanet
accepts only when the pod owns it. mac and ips need the network's allowPodMac/allowPodIPs too.
An entry's own capabilities override these. */ -}}
{{- $caps := dict "CNIDeviceInfoFile" true -}}
{{- $_ := set $conf "capabilities" (mergeOverwrite $caps (deepCopy (default dict .capabilities))) -}}
{{- toPrettyJson $conf -}}
{{- end -}}

{{/*
rdmanet.validate: fails the render with a message naming the entry and the key. Runs from the
ConfigMap template, which every render includes.
*/}}
{{- define "rdmanet.validate" -}}
{{- $pools := dict -}}
{{- range $i, $p := .Values.pools -}}
{{- if hasKey $pools $p.resourceName -}}
{{- fail (printf "pools[%d]: resourceName %q is used by an earlier pool" $i $p.resourceName) -}}
{{- end -}}
{{- if and (hasKey $p "rdmaHcaMax") (ne (default "vf" $p.mode) "shared") -}}
{{- fail (printf "pools[%d] (%s): rdmaHcaMax applies only to mode: shared" $i $p.resourceName) -}}
{{- end -}}
{{- $_ := set $pools $p.resourceName $p -}}
{{- end -}}
{{- if eq .Values.api "dra" -}}
{{- $classes := dict -}}
{{- range $i, $p := .Values.pools -}}
{{- $class := include "rdmanet.deviceClassName" (dict "pool" $p.resourceName "driver" $.Values.dra.driverName) -}}
{{- if or (gt (len $class) 253) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$" $class)) -}}
{{- fail (printf "pools[%d] (%s): its DeviceClass name %q is not a DNS subdomain; with api: dra a resourceName must start and end with a letter or digit" $i $p.resourceName $class) -}}
{{- end -}}
{{- if hasKey $classes $class -}}
{{- fail (printf "pools[%d] (%s): its DeviceClass name %q is also pool %s's (names are lower-cased, '_' becomes '-')" $i $p.resourceName $class (get $classes $class)) -}}
{{- end -}}
{{- $_ := set $classes $class $p.resourceName -}}
{{- end -}}
{{- end -}}
{{- $names := dict -}}
{{- range $i, $n := .Values.networks -}}
{{- $where := printf "networks[%d] (%s)" $i $n.name -}}
{{- $key := printf "%s/%s" (default "" $n.namespace) $n.name -}}
{{- if hasKey $names $key -}}
{{- fail (printf "%s: name %q is used by an earlier network in the same namespace" $where $n.name) -}}
{{- end -}}
{{- $_ := set $names $key true -}}
{{- $pool := dict -}}
{{- if $n.pool -}}
{{- if not (hasKey $pools $n.pool) -}}
{{- fail (printf "%s: pool %q is not a resourceName in pools (have: %s)" $where $n.pool (keys $pools | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $pool = get $pools $n.pool -}}
{{- end -}}
{{- $poolMode := default "vf" $pool.mode -}}
{{- if eq $n.mode "sriov" -}}
{{- if not $n.pool -}}
{{- fail (printf "%s: mode sriov needs a pool (the VF comes from the device plugin)" $where) -}}
{{- end -}}
{{- if ne $poolMode "vf" -}}
{{- fail (printf "%s: mode sriov needs a pool with mode vf, and pool %q has mode %s" $where $n.pool $poolMode) -}}
{{- end -}}
{{- range $k := list "master" "macvlanMode" "device" "pciBusID" "deviceID" -}}
{{- if hasKey $n $k -}}
{{- fail (printf "%s: %s does not apply to mode sriov (the VF comes from the pool)" $where $k) -}}
{{- end -}}
{{- end -}}
{{- else if eq $n.mode "macvlan" -}}
{{- if not $n.master -}}
{{- fail (printf "%s: mode macvlan needs master (the RoCE PF netdev)" $where) -}}
{{- end -}}
{{- if and $n.pool (ne $poolMode "shared") -}}
{{- fail (printf "%s: mode macvlan needs a pool with mode shared, and pool %q has mode %s" $where $n.pool $poolMode) -}}
{{- end -}}
{{- range $k := list "device" "pciBusID" "deviceID" "spoofchk" "trust" "link_state" "min_tx_rate" "max_tx_rate" -}}
{{- if hasKey $n $k -}}
{{- fail (printf "%s: %s does not apply to mode macvlan" $where $k) -}}
{{- end -}}
{{- end -}}
{{- else -}}
{{- $sources := 0 -}}
{{- range $k := list "device" "pciBusID" "deviceID" "pool" -}}
{{- if hasKey $n $k -}}{{- $sources = add1 $sources -}}{{- end -}}
{{- end -}}
{{- if ne $sources 1 -}}
{{- fail (printf "%s: mode host-device needs exactly one of device, pciBusID, deviceID or pool" $where) -}}
{{- end -}}
{{- if and $n.pool (ne $poolMode "vf") -}}
{{- fail (printf "%s: mode host-device needs a pool with mode vf, and pool %q has mode %s" $where $n.pool $poolMode) -}}
{{- end -}}
{{- range $k := list "master" "macvlanMode" "spoofchk" "trust" "link_state" "min_tx_rate" "max_tx_rate" -}}
{{- if hasKey $n $k -}}
{{- fail (printf "%s: %s does not apply to mode host-device" $where $k) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $n "vlanQoS") $n.lossless -}}
{{- if ne (int $n.vlanQoS) (int $n.lossless.priority) -}}
{{- fail (printf "%s: vlanQoS %d must equal lossless.priority %d (the frames carry the lossless priority)" $where (int $n.vlanQoS) (int $n.lossless.priority)) -}}
{{- end -}}
{{- end -}}
{{- if and $n.lossless $pool.lossless -}}
{{- if ne (int $n.lossless.priority) (int $pool.lossless.priority) -}}
{{- fail (printf "%s: lossless.priority %d differs from pool %q's lossless.priority %d (NCCL's traffic class comes from the pool)" $where (int $n.lossless.priority) $n.pool (int $pool.lossless.priority)) -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $n "vlanProto") (lt (int (default 0 $n.vlan)) 1) -}}
{{- fail (printf "%s: vlanProto %s needs a non-zero vlan" $where $n.vlanProto) -}}
{{- end -}}
{{- if and (hasKey $n "min_tx_rate") (hasKey $n "max_tx_rate") -}}
{{- if and (gt (int $n.max_tx_rate) 0) (gt (int $n.min_tx_rate) (int $n.max_tx_rate)) -}}
{{- fail (printf "%s: min_tx_rate %d exceeds max_tx_rate %d" $where (int $n.min_tx_rate) (int $n.max_tx_rate)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
