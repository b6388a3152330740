// RapidJSON helpers for the bodies the reconciler builds (pods in
// pod_builder.h, the plugins' pod mutations and objects in plugins.h): lookups
// that tolerate an absent or null member, and additions that leave what the
// document already has, so a pod keeps what its template wrote (the template
// wins over what muster would add; the API would reject a name given twice).
// In their own namespace for their generic names.
//
// Every `a` is the allocator of the document the values belong to: a value
// added to `obj` must come from the allocator `obj` lives in.
//
// Thread-compatible; each function touches only the values passed in.
#pragma once

#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "model/job.h"

namespace muster::reconciler {

using PodAllocator = rapidjson::Document::AllocatorType;

namespace pod_json {

// [{apiVersion: batch.volcano.sh/v1alpha1, kind: Job, name, uid, controller:
// true, blockOwnerDeletion: true}]: the job's controller reference.
rapidjson::Value JobOwnerReferences(const Job& job, PodAllocator& a);

// --- Lookups ---------------------------------------------------------------

// The member `key` of `obj` (null included), or nullptr: the mutable lookup.
// Non-const RapidJSON member iterators do not compare under C++20 in clang
// (-Wambiguous-reversed-operator), so every mutable lookup goes through here.
// REQUIRES: `obj` is an object.
rapidjson::Value* MemberOf(rapidjson::Value& obj, std::string_view key);
// The member `key` of `obj`, or nullptr when absent, null or `obj` is not an
// object.
const rapidjson::Value* Find(const rapidjson::Value& obj, std::string_view key);
rapidjson::Value* Find(rapidjson::Value& obj, std::string_view key);
// obj[key] when it is a string, else "".
std::string StringAt(const rapidjson::Value& obj, std::string_view key);

// --- Building ----------------------------------------------------------------

// A copy of `s` in `a`.
rapidjson::Value Str(std::string_view s, PodAllocator& a);
// The array at `key` of `obj`, created when absent; a null member becomes an
// empty array. REQUIRES: `obj` is an object whose `key`, when present, is an
// array or null.
rapidjson::Value& ArrayMember(rapidjson::Value& obj, std::string_view key, PodAllocator& a);
// Sets obj[key] = value, replacing an existing member. REQUIRES: `obj` is an
// object.
void SetMember(rapidjson::Value& obj, std::string_view key, rapidjson::Value value,
               PodAllocator& a);

// --- Additions that leave what is there ----------------------------------------
//
// REQUIRES (all of them): `container` or `spec` is an object whose env,
// volumes and volumeMounts are arrays of objects, absent or null (BuildPod
// checks a template for this).

// Appends the env var `var` ({name, value | valueFrom}) to the container
// unless it has a variable of that name (the template wins).
// REQUIRES: var["name"] is a string.
void AddEnv(rapidjson::Value& container, rapidjson::Value var, PodAllocator& a);
// AddEnv of {name, value}.
void AddEnvValue(rapidjson::Value& container, std::string_view name, std::string_view value,
                 PodAllocator& a);
// AddEnv of {name, valueFrom: {<source_kind>: source}}, e.g. source_kind
// "configMapKeyRef" with source {name, key}, or "fieldRef" with {fieldPath}.
void AddEnvValueFrom(rapidjson::Value& container, std::string_view name,
                     std::string_view source_kind, rapidjson::Value source, PodAllocator& a);
// Appends `volume` to spec.volumes unless one of the same name exists.
// REQUIRES: volume["name"] is a string.
void AddVolume(rapidjson::Value& spec, rapidjson::Value volume, PodAllocator& a);
// Appends {name: volume, mountPath, subPath (when not empty)} to the
// container's volumeMounts unless it mounts something at `mount_path`.
void AddVolumeMount(rapidjson::Value& container, std::string_view volume,
                    std::string_view mount_path, std::string_view sub_path, PodAllocator& a);

}  // namespace pod_json
}  // namespace muster::reconciler
