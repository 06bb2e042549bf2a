import { AwsIntegration, type IntegrationConfig, type Method, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnPermission, IFunction } from 'aws-cdk-lib/aws-lambda';

/**
 * A Lambda proxy integration, as CDK's LambdaIntegration makes it, with the one permission API Gateway needs:
 * `lambda:InvokeFunction` from this method on the API's one stage alone (no console test invocation, which
 * would bypass the authorizer). LambdaIntegration's permission names the stage by a reference, so it waits for
 * the stage, which moves to a new deployment first: a route whose function was replaced would answer 500
 * until its permission exists. This one names the stage by its name, and the deployment waits for it.
 */
export class RouteIntegration extends AwsIntegration {
  constructor(
    private readonly fn: IFunction,
    private readonly name: string,
    private readonly restApi: RestApi,
    private readonly stageName: string,
  ) {
    super({ proxy: true, service: 'lambda', path: `2015-03-31/functions/${fn.functionArn}/invocations` });
  }

  override bind(method: Method): IntegrationConfig {
    const config = super.bind(method);
    const id = 'InvokePermission';
    this.fn.addPermission(id, {
      principal: new ServicePrincipal('apigateway.amazonaws.com'),
      scope: method,
      sourceArn: this.restApi.arnForExecuteApi(method.httpMethod, pathForArn(method.resource.path), this.stageName),
    });
    const permission = method.node.findChild(id) as CfnPermission;
    // Readable, as the functions' are: `CreateRequestPermission`.
    permission.overrideLogicalId(`${this.name}Permission`);
    this.restApi.latestDeployment?.node.addDependency(permission);
    return config;
  }
}

/** A resource path as execute-api ARNs have it: each `{variable}` is `*`. */
const pathForArn = (path: string) => path.replace(/\{[^}]*\}/g, '*');
