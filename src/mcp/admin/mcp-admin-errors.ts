/** The admin API's MCP-specific errors (HTTP, OpenAI envelope), built in one place. */
import { ErrorCode, ErrorType } from '../../lib/error-catalogue.ts';
import { GatewayError } from '../../lib/gateway-error.ts';

export const mcpAdminErrors = {
  ownerMayNotApprove(): GatewayError {
    return new GatewayError({
      status: 403,
      type: ErrorType.permission,
      code: 'approval_by_key_owner',
      message:
        'You own or created the API key that made this call, so you may reject it but not approve it (four-eyes). Ask another administrator.',
    });
  },
  notPending(approvalRequestId: string): GatewayError {
    return new GatewayError({
      status: 404,
      type: ErrorType.notFound,
      code: ErrorCode.notFound,
      message: `No pending approval request with id '${approvalRequestId}' exists (it may have been decided already).`,
    });
  },
  expired(approvalRequestId: string): GatewayError {
    return new GatewayError({
      status: 409,
      type: ErrorType.conflict,
      code: 'approval_expired',
      message: `Approval request '${approvalRequestId}' expired after 24 hours without a decision; the caller must repeat the call to ask again.`,
    });
  },
} as const;
