// The geometry-query subcommands of the vkcollide tool (tools/query_commands.cpp): query files
// (docs/query-format.md) run on a backend and written as a contacts file, or compared across backends.
#pragma once

namespace vkc::tool {

// vkcollide query QUERIES --backend vulkan|cpu|cpu-scalar [--device SEL] [--validation] [--capacity N]
// [--repeat K] --out CONTACTS
int queryCommand(int argc, char** argv);

// vkcollide compare QUERIES [--device SEL] [--validation] [--capacity N] [--repeat K]
int queryCompareCommand(int argc, char** argv);

// Whether a `compare` command line names a query file (an argument that is a readable file whose
// top-level "format" is "vkcollide-queries"): compare then runs queryCompareCommand.
bool namesQueryFile(int argc, char** argv);

// The usage lines of these commands.
const char* queryUsage();

}  // namespace vkc::tool
