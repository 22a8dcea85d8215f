/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmds.h: the gaptrace subcommands; each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit code.  Each
 * command's long-option table (its short options are generated from it) is
 * also what `gaptrace help --options` lists for completion.
 */
#ifndef GT_CMDS_H
#define GT_CMDS_H

#include <getopt.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_monitor(int argc, char **argv);

extern const struct option record_options[];
extern const struct option report_options[];
extern const struct option info_options[];
extern const struct option doctor_options[];
extern const struct option dump_options[];
extern const struct option flame_options[];
extern const struct option diff_options[];
extern const struct option export_options[];
extern const struct option monitor_options[];

#endif /* GT_CMDS_H */
