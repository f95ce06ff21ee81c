// interop.c - the interop property routines on a host-only runtime (a program
// calling them did not load before): the only object is omp_interop_none, whose
// properties are all empty (omp_irc_empty); an unknown property is out of
// range; an object from elsewhere is omp_irc_other; names and type descriptions
// of the nine properties, descriptions of the eight return codes, null beyond
// (Debian's libomp without libomptarget answers null and sets no return code)
// oxiomp-test: threads=1
// oxiomp-test: reference=skip
// oxiomp-test: gcc=skip: omp_interop_t, which gcc 12's omp.h lacks
#include <omp.h>
#include <string.h>

#include "check.h"

int main(void) {
  CHECK_EQ("outside regions", omp_get_num_threads(), 1); // (starts the runtime)
  omp_interop_t none = omp_interop_none;
  int rc = 99;
  CHECK_EQ("no implementation-defined properties", omp_get_num_interop_properties(none), 0);
  CHECK_EQ("int of none", omp_get_interop_int(none, omp_ipr_device_num, &rc), 0);
  CHECK_EQ("int of none: empty", rc, omp_irc_empty);
  rc = 99;
  CHECK("ptr of none", omp_get_interop_ptr(none, omp_ipr_device, &rc) == NULL);
  CHECK_EQ("ptr of none: empty", rc, omp_irc_empty);
  rc = 99;
  CHECK("str of none", omp_get_interop_str(none, omp_ipr_vendor_name, &rc) == NULL);
  CHECK_EQ("str of none: empty", rc, omp_irc_empty);
  rc = 99;
  omp_get_interop_int(none, omp_ipr_first - 1, &rc);
  CHECK_EQ("unknown property: out of range", rc, omp_irc_out_of_range);
  rc = 99;
  omp_get_interop_int(none, 0, &rc);
  CHECK_EQ("property 0 (none defined): out of range", rc, omp_irc_out_of_range);
  int fake;
  rc = 99;
  omp_get_interop_int((omp_interop_t)&fake, omp_ipr_fr_id, &rc);
  CHECK_EQ("an object from elsewhere: other", rc, omp_irc_other);
  omp_get_interop_int(none, omp_ipr_fr_id, NULL); // a null return-code pointer is fine

  const char *names[] = {"targetsync", "device_context", "device", "platform", "device_num",
                         "vendor_name", "vendor", "fr_name", "fr_id"};
  for (int p = omp_ipr_first; p <= omp_ipr_fr_id; p++) {
    const char *n = omp_get_interop_name(none, (omp_interop_property_t)p);
    CHECK("property name", n && strcmp(n, names[p - omp_ipr_first]) == 0);
    CHECK("property type", omp_get_interop_type_desc(none, (omp_interop_property_t)p) != NULL);
  }
  CHECK("no name beyond", omp_get_interop_name(none, (omp_interop_property_t)0) == NULL);
  CHECK("int type", strcmp(omp_get_interop_type_desc(none, omp_ipr_device_num), "int") == 0);
  for (int r = omp_irc_other; r <= omp_irc_no_value; r++)
    CHECK("return-code description", omp_get_interop_rc_desc(none, (omp_interop_rc_t)r) != NULL);
  CHECK("none beyond", omp_get_interop_rc_desc(none, (omp_interop_rc_t)2) == NULL &&
                           omp_get_interop_rc_desc(none, (omp_interop_rc_t)-7) == NULL);
  return failures != 0;
}
