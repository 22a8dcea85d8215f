/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmds.h: the gaptrace subcommands; each takes the arguments after its name
 * (argv[0] is the subcommand) and returns the process exit code.
 */
#ifndef GT_CMDS_H
#define GT_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_monitor(int argc, char **argv);

#endif /* GT_CMDS_H */
