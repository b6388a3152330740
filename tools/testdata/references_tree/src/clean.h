// Facts and upstream sources are fine: the SSH wire "string" (RFC 4251 §5),
// pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go,
// KEP-4832, kubernetes issue #105720, and the repository's own docs/topology.md.
#pragma once
