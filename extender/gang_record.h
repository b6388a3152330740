// GangRecord: what the gang controller remembers of one gang between passes.
//
// One record per gang key (PodGroup "namespace/name"), so a gang that
// finished or was deleted is forgotten by one erase. Members are recorded
// only while reserved (by pod uid).
//
// Thread-safety: plain values; the controller's pass thread owns them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/string_hash.h"
#include "gang/gang.h"
#include "model/pod_group.h"
#include "model/time.h"

namespace muster::extender {

// A reserved member the controller planned (not one bind holds a node for).
struct MemberRecord {
  // A pass reserved it (so it is the controller's to wake).
  bool planned = false;
  // The node it was woken (its gate lifted, or touched) for; empty: not yet.
  std::string woken_on;
};

struct GangRecord {
  // Members scheduled (bound or finished) at the last pass.
  int32_t scheduled = 0;
  // The last progress of the gang's current reservation (made, or a member
  // bound); unset while it holds none (gang::Gang::reserved_since).
  std::optional<Time> reserved_since;
  // A preemption for this gang is in flight: no new victims before this.
  std::optional<Time> preempting_until;
  // When the gang was admitted (Inqueue), until minMember are scheduled.
  std::optional<Time> admitted_at;
  // minMember members were scheduled once (the wait clock stopped).
  bool started = false;
  // The PodGroup status last written, and when. `written` is unset again
  // when that write failed, so the next pass writes it again.
  std::optional<PodGroupStatus> written;
  std::optional<Time> written_at;
  // The reserved members a pass planned, by pod uid.
  std::map<std::string, MemberRecord, std::less<>> members;
  // The gang as the last pass found it settled - nothing decided for it,
  // nothing reserved, and the status it computed the one its PodGroup shows
  // (or no PodGroup object to show one) - and that status's phase. A pass
  // that finds the same PodGroup object and the same members computes the
  // same status, writes nothing and changes no record: it reuses the phase
  // instead (most gangs of a busy cluster, every pass).
  struct Settled {
    std::shared_ptr<const PodGroup> group;
    gang::MemberList members;  // shares the gang's
    std::string phase;
  };
  std::optional<Settled> settled;
};

// By gang key. Hashed: every pass looks up every gang's.
using GangRecords = std::unordered_map<std::string, GangRecord, base::StringHash, std::equal_to<>>;

}  // namespace muster::extender
