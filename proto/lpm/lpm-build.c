/*
 *	bloombird -- LPM exporter protocol: registration
 *
 *	Can be freely distributed and used under the terms of the GNU GPL,
 *	version 2 or any later version.
 */

/*
 * BIRD calls <directory>_build() for every protocol, so this one must be
 * lpm_build(): the name of an inline function of nest/lpm.h (an engine's
 * whole-table build). It lives here, in a file that does not include that
 * header.
 */

#include "nest/bird.h"
#include "nest/protocol.h"

extern struct protocol proto_lpm;

void lpm_build(void);

void
lpm_build(void)
{
  proto_build(&proto_lpm);
}
