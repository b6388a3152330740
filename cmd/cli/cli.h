// `muster job|queue|why`: the command line users run against their cluster
// (also as `kubectl muster ...` through a kubectl-muster link). Each entry
// takes the arguments after its noun and returns the exit code (session.h);
// `--help` works on every noun and verb.
//
//   muster job   list|view|suspend|resume|delete|run   (job_view.h)
//   muster queue list|get|create|delete|open|close     (queue_view.h)
//   muster why   [pod/|job/|vcjob/|podgroup/|pg/]NAME  (why_inputs.h, why_explain.h)
//
// Thread-compatible: one call at a time per Io.
#pragma once

#include <string>
#include <vector>

#include "cmd/cli/session.h"

namespace muster::cli {

int RunJob(const std::vector<std::string>& args, Io& io);
int RunQueue(const std::vector<std::string>& args, Io& io);
int RunWhy(const std::vector<std::string>& args, Io& io);

}  // namespace muster::cli
