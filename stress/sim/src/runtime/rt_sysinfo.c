/*
 * rt_sysinfo.c - SoC name and version strings.
 *
 * The SoC name starts with a real SoC name (so "startswith('Ascend910B')" checks behave as on
 * the bug report's machine) and says it is the simulator.  Version strings look like a CANN
 * 9.2.0 install with an "-aclsim.<simulator version>" suffix.
 */
#include <stdio.h>
#include <string.h>

#include "rt_private.h"

#define SOC_NAME "Ascend910B3-aclsim"
#define CANN_VERSION "9.2.0"

ACLSIM_API const char *aclrtGetSocName(void)
{
    return SOC_NAME;
}

ACLSIM_API const char *aclsimVersion(void)
{
    return ACLSIM_VERSION "+" ACLSIM_BUILD_KEY;
}

ACLSIM_API aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    static const char *const known[] = {"runtime", "driver", "firmware", "opp", "toolkit", "cann"};
    if (!pkgName)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr: pkgName is NULL");
    if (!versionStr)
        return aclsim_set_error(ACL_ERROR_INVALID_PARAM, "aclsysGetVersionStr: versionStr is NULL");
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(pkgName, known[i]) == 0) {
            snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "%s-aclsim.%s", CANN_VERSION,
                     ACLSIM_VERSION);
            return ACL_SUCCESS;
        }
    }
    return aclsim_set_error(ACL_ERROR_INVALID_PARAM,
                            "aclsysGetVersionStr: unknown pkgName '%.64s' (known: runtime, driver, "
                            "firmware, opp, toolkit, cann)",
                            pkgName);
}
