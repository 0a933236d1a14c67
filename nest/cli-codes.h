/*
 *	bloombird -- Reply codes of our CLI commands
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

#ifndef _BIRD_CLI_CODES_H_
#define _BIRD_CLI_CODES_H_

/*
 * The codes of the lines our commands print, after BIRD's own; both are
 * listed in doc/reply_codes, where scripts reading birdc's output look them
 * up. Lines added to BIRD's own replies (show protocols all) keep BIRD's
 * code for that reply.
 */
#define CLI_FIB			1027	/* show fib */
#define CLI_LPM			1028	/* show lpm, show lpm benchmark */
#define CLI_LPM_LOOKUP		1030	/* show lpm lookup */
#define CLI_LPM_LOOKUP_BENCH	1031	/* show lpm lookup benchmark */

#endif
