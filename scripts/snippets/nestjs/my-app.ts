// The reader's own code in the NestJS snippet: a guard that authenticates (sets req.user), and an order table.
import { Injectable, type CanActivate } from '@nestjs/common';

@Injectable()
export class AuthGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

export const db = {
  async insertOrder(_row: { memberId: string; item?: string; tokenId: string }): Promise<void> {},
};
